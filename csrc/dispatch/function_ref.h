// A non-owning reference to a callable: the cheap way to pass a loop body to a non-template
// function (std::function would allocate and copy).
#pragma once
#include <type_traits>
#include <utility>

namespace ember {

template <typename Fn>
class function_ref;

template <typename Ret, typename... Args>
class function_ref<Ret(Args...)> {
 public:
  template <typename F, typename = std::enable_if_t<!std::is_same_v<std::decay_t<F>, function_ref>>>
  function_ref(F&& f)  // NOLINT: implicit from any callable
      : obj_(const_cast<void*>(static_cast<const void*>(&f))),
        call_([](void* obj, Args... args) -> Ret {
          return (*static_cast<std::remove_reference_t<F>*>(obj))(std::forward<Args>(args)...);
        }) {}
  Ret operator()(Args... args) const { return call_(obj_, std::forward<Args>(args)...); }

 private:
  void* obj_;
  Ret (*call_)(void*, Args...);
};

}  // namespace ember

"""The modules behind ember.utils.benchmark: common (TaskSpec, Measurement and formatting
helpers), timer (Timer) and compare (Compare)."""

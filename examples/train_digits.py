"""Train a small CNN on scikit-learn's handwritten digits with Ember, then save and reload it.

    python examples/train_digits.py [--epochs 20] [--batch-size 32] [--threads N]

The code is what a PyTorch user writes: replace ``ember`` by ``torch`` and it runs there too.
The dataset (1797 8x8 grey images of the digits 0-9) ships inside scikit-learn, so nothing is
downloaded. The script prints the test accuracy, the training time, and the accuracy of the
model after an ``ember.save`` / ``ember.load`` round trip (which must be the same).
"""

import argparse
import os
import sys
import tempfile
import time

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from tqdm import tqdm

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember.utils.data import DataLoader, TensorDataset


class DigitsCNN(nn.Module):
    """Two 3x3 convolutions, a max pool and two linear layers: 8x8 -> 10 logits."""

    def __init__(self, channels=32, hidden=128, dropout=0.25):
        super().__init__()
        self.conv1 = nn.Conv2d(1, channels, kernel_size=3, padding=1)
        self.conv2 = nn.Conv2d(channels, 2 * channels, kernel_size=3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.dropout = nn.Dropout(dropout)
        self.fc1 = nn.Linear(2 * channels * 4 * 4, hidden)
        self.fc2 = nn.Linear(hidden, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = self.pool(F.relu(self.conv2(x)))
        x = self.dropout(ember.flatten(x, 1))
        x = self.dropout(F.relu(self.fc1(x)))
        return self.fc2(x)


def load_data(seed):
    digits = load_digits()
    images = (digits.images / 16.0).astype(np.float32)[:, None]  # (N, 1, 8, 8) in [0, 1]
    labels = digits.target.astype(np.int64)
    x_train, x_test, y_train, y_test = train_test_split(
        images, labels, test_size=0.2, random_state=seed, stratify=labels
    )
    return (
        TensorDataset(ember.from_numpy(x_train), ember.from_numpy(y_train)),
        TensorDataset(ember.from_numpy(x_test), ember.from_numpy(y_test)),
    )


@ember.no_grad()
def accuracy(model, loader):
    model.eval()
    correct = total = 0
    for x, y in loader:
        correct += int((model(x).argmax(dim=1) == y).sum())
        total += len(y)
    return correct / total


def train(model, loader, epochs, lr, progress=True):
    optimizer = ember.optim.Adam(model.parameters(), lr=lr)
    scheduler = ember.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs)
    # One bar over all steps; a bar per epoch floods logs that are not a terminal.
    with tqdm(total=epochs * len(loader), unit="step", disable=not progress,
              file=sys.stdout, mininterval=0.5) as bar:
        for epoch in range(epochs):
            model.train()
            for x, y in loader:
                loss = F.cross_entropy(model(x), y)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                bar.set_postfix(epoch=epoch + 1, loss=f"{loss.item():.4f}", refresh=False)
                bar.update()
            scheduler.step()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=None, help="default: all cores")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)

    ember.manual_seed(args.seed)
    if args.threads:
        ember.set_num_threads(args.threads)
    train_set, test_set = load_data(args.seed)
    generator = ember.Generator().manual_seed(args.seed)
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True,
                              generator=generator)
    test_loader = DataLoader(test_set, batch_size=256)
    print(f"digits: {len(train_set)} training and {len(test_set)} test images, "
          f"{ember.get_num_threads()} threads")

    model = DigitsCNN()
    print(model)
    start = time.perf_counter()
    train(model, train_loader, args.epochs, args.lr, progress=not args.no_progress)
    seconds = time.perf_counter() - start
    test_accuracy = accuracy(model, test_loader)
    print(f"training time: {seconds:.1f} s for {args.epochs} epochs")
    print(f"test accuracy: {100 * test_accuracy:.2f}%")

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "digits_cnn.safetensors")
        ember.save(model.state_dict(), path)
        restored = DigitsCNN()
        restored.load_state_dict(ember.load(path))
    restored_accuracy = accuracy(restored, test_loader)
    print(f"after ember.save / ember.load: test accuracy {100 * restored_accuracy:.2f}% "
          f"({'same' if restored_accuracy == test_accuracy else 'DIFFERENT'})")
    return test_accuracy, restored_accuracy


if __name__ == "__main__":
    main()

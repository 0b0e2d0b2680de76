#!/usr/bin/env python3
"""Trains a Wuzi network with PyTorch alone, from positions that `wuzi-encode`
exported: for machines whose PyTorch is not the libtorch this engine links
(a GPU machine lent for a while, see networks/README.md).

The network, the training losses, the optimiser and the learning-rate
schedule are those of `pbrain-wuzi train` (src/nn/model.rs,
src/train/trainer.rs). Validation differs on self-play positions: here it
is always against the move played (in self-play, the search's most visited,
which differs from the move played on temperature-sampled plies) and the
game's result,
so that figures compare across data with and without search targets; the
engine's trainer validates against the soft targets where there are. The
weights are written as a safetensors file with the engine's tensor names,
which `pbrain-wuzi --network FILE` loads. The symmetries are applied here as
the engine applies them: cells moved by rot90 then a left-right flip, planes
reordered by the orders `wuzi-encode` wrote to symmetries.tsv.

Needs only torch (no numpy, no safetensors package).
"""

import argparse
import csv
import ctypes
import json
import math
import os
import struct
import sys
import time
import warnings

# torch warns at import when numpy is absent; nothing here uses numpy.
warnings.filterwarnings("ignore", message="Failed to initialize NumPy")
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

BOARD_PLANE = 5
LEGAL_PLANE = 3


# --- data -------------------------------------------------------------------


class Shard:
    """The positions of one split and board size, on the training device."""

    def __init__(self, directory, row, device):
        self.split = row["split"]
        self.width = int(row["width"])
        self.height = int(row["height"])
        self.count = int(row["positions"])
        self.planes = int(row["planes"])
        self.row_bytes = int(row["bytes_per_position"])
        stem = os.path.join(directory, f"{self.split}-{self.width}x{self.height}")
        packed = read_bytes(stem + ".planes", self.count * self.row_bytes)
        targets = read_bytes(stem + ".targets", self.count * 4).view(self.count, 4).long()
        self.packed = packed.view(self.count, self.row_bytes).to(device)
        self.move = (targets[:, 0] + 256 * targets[:, 1]).to(device)
        self.wdl = targets[:, 2].to(device)
        # Soft targets (wuzi-encode writes them when self-play records with
        # search targets are among the games): the visit shares and the
        # search's win/draw/loss, as 16-bit little-endian counts of
        # 32767ths, held as int16 (they fit) and made float per batch.
        self.soft_policy = self.soft_wdl = None
        if os.path.exists(stem + ".soft"):
            cells = self.width * self.height
            raw = read_bytes(stem + ".soft", 2 * self.count * (cells + 3))
            # (little-endian machines, as tensor_bytes assumes too)
            soft = raw.view(torch.int16).view(self.count, cells + 3)
            self.soft_policy = soft[:, :cells].to(device)
            self.soft_wdl = soft[:, cells:].to(device)

    def input(self, rows):
        """Float planes [len(rows), planes, H, W] of the positions `rows`."""
        bits = self.packed[rows]
        shifts = torch.arange(7, -1, -1, device=bits.device, dtype=torch.uint8)
        unpacked = (bits.unsqueeze(-1) >> shifts) & 1
        cells = self.planes * self.height * self.width
        return unpacked.view(len(rows), -1)[:, :cells].view(
            len(rows), self.planes, self.height, self.width).float()


def read_bytes(path, expected):
    try:
        with open(path, "rb") as f:
            data = bytearray(f.read())
    except OSError as e:
        sys.exit(f"gpu_train: cannot read {path}: {e.strerror or e}")
    if len(data) != expected:
        sys.exit(f"gpu_train: {path} has {len(data)} bytes, index.tsv says {expected}")
    return torch.frombuffer(data, dtype=torch.uint8) if data else torch.zeros(0, dtype=torch.uint8)


INDEX_COLUMNS = ("split", "width", "height", "positions", "planes", "bytes_per_position")


def load_export(directory, device):
    """The shards and the symmetries' plane orders of a wuzi-encode export;
    a missing or malformed file ends the script with a line naming it."""
    index = os.path.join(directory, "index.tsv")
    try:
        with open(index) as f:
            rows = list(csv.DictReader(f, delimiter="\t"))
    except OSError as e:
        sys.exit(f"gpu_train: cannot read {index}: {e.strerror or e} (is {directory} a wuzi-encode export?)")
    for line, row in enumerate(rows, start=2):
        missing = [c for c in INDEX_COLUMNS if not row.get(c)]
        if missing:
            sys.exit(f"gpu_train: {index} line {line}: no {', '.join(missing)} (columns: {', '.join(INDEX_COLUMNS)})")
        for column in INDEX_COLUMNS[1:]:
            if not row[column].isdigit():
                sys.exit(f"gpu_train: {index} line {line}: {column} {row[column]!r} is not a count")
    shards = [Shard(directory, r, device) for r in rows if int(r["positions"]) > 0]
    path = os.path.join(directory, "symmetries.tsv")
    orders = {}
    try:
        with open(path) as f:
            for number, line in enumerate(f, start=1):
                fields = line.split()
                if fields and fields[0].isdigit():
                    if not all(x.isdigit() for x in fields[1:]):
                        sys.exit(f"gpu_train: {path} line {number}: plane numbers expected")
                    orders[int(fields[0])] = torch.tensor([int(x) for x in fields[1:]], device=device)
    except OSError as e:
        sys.exit(f"gpu_train: cannot read {path}: {e.strerror or e}")
    # The augmentation draws any of the 8 symmetries and reorders every plane.
    planes = {s.planes for s in shards}
    for k in range(8):
        order = orders.get(k)
        if order is None:
            sys.exit(f"gpu_train: {path}: no plane order of symmetry {k}")
        for n in planes:
            if len(order) != n or (n and int(order.max()) >= n):
                sys.exit(f"gpu_train: {path}: the plane order of symmetry {k} does not fit {n} planes")
    return shards, orders


# --- symmetries -------------------------------------------------------------


def symmetries_for(height, width):
    return list(range(8)) if height == width else [0, 2, 4, 6]


def move_cells(x, k):
    """Symmetry k on the last two dims: k % 4 quarter turns, then a
    left-right mirror when k >= 4 (the engine's Symmetry::apply)."""
    if k % 4:
        x = torch.rot90(x, k % 4, dims=(2, 3))
    if k >= 4:
        x = torch.flip(x, dims=(3,))
    return x


class Augmenter:
    """Applies a random symmetry to each position of a batch."""

    def __init__(self, orders):
        self.orders = orders
        self.target_maps = {}

    def target_map(self, k, height, width, device):
        """new_index[old_index] for the cells of a height x width board."""
        key = (k, height, width)
        if key not in self.target_maps:
            grid = torch.arange(height * width, device=device).view(1, 1, height, width)
            moved = move_cells(grid, k).flatten()
            new_index = torch.empty_like(moved)
            new_index[moved] = torch.arange(moved.numel(), device=device)
            self.target_maps[key] = new_index
        return self.target_maps[key]

    def apply(self, k, x, move, soft_policy=None):
        """Symmetry k on the planes, the move and (when given) the soft
        policy [N, H*W]: the share of cell c goes to cell target_map[c]."""
        h, w = x.shape[2], x.shape[3]
        x = move_cells(x, k).index_select(1, self.orders[k])
        cells = self.target_map(k, h, w, x.device)
        moved = None
        if soft_policy is not None:
            moved = torch.empty_like(soft_policy)
            moved[:, cells] = soft_policy
        return x, cells[move], moved

    def random(self, x, move, generator, soft_policy=None):
        """A random symmetry per row, applied to the planes, the move and
        (when given) the soft policy [N, H*W]."""
        choices = symmetries_for(x.shape[2], x.shape[3])
        pick = torch.randint(len(choices), (x.shape[0],), generator=generator).to(x.device)
        out_x, out_move = torch.empty_like(x), torch.empty_like(move)
        out_soft = None if soft_policy is None else torch.empty_like(soft_policy)
        for i, k in enumerate(choices):
            rows = (pick == i).nonzero().flatten()
            if rows.numel():
                soft = None if soft_policy is None else soft_policy[rows]
                out_x[rows], out_move[rows], moved = self.apply(k, x[rows], move[rows], soft)
                if out_soft is not None:
                    out_soft[rows] = moved
        return out_x, out_move, out_soft


# --- the network (src/nn/model.rs) -----------------------------------------


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(y)) + x)


class ResNet(nn.Module):
    def __init__(self, planes, blocks, c):
        super().__init__()
        self.stem = nn.Conv2d(planes, c, 3, padding=1, bias=False)
        self.stem_bn = nn.BatchNorm2d(c)
        self.blocks = nn.ModuleList(Block(c) for _ in range(blocks))
        self.policy_conv = nn.Conv2d(c, c, 1, bias=False)
        self.policy_bn = nn.BatchNorm2d(c)
        self.policy_out = nn.Conv2d(c, 1, 1, bias=True)
        self.value_conv = nn.Conv2d(c, c, 1, bias=False)
        self.value_bn = nn.BatchNorm2d(c)
        self.value_hidden = nn.Linear(c, c)
        self.value_out = nn.Linear(c, 3)

    def forward(self, inp):
        x = F.relu(self.stem_bn(self.stem(inp)))
        for block in self.blocks:
            x = block(x)
        legal = inp[:, LEGAL_PLANE].flatten(1)
        policy = self.policy_out(F.relu(self.policy_bn(self.policy_conv(x)))).flatten(1).float()
        policy = policy.masked_fill(legal == 0, -1e9)
        on_board = inp[:, BOARD_PLANE:BOARD_PLANE + 1]
        cells = on_board.sum(dim=(2, 3)).float().clamp_min(1.0)
        v = F.relu(self.value_bn(self.value_conv(x))) * on_board.to(x.dtype)
        pooled = (v.float().sum(dim=(2, 3)) / cells).to(v.dtype)
        wdl = self.value_out(F.relu(self.value_hidden(pooled))).float()
        return policy, wdl


# --- safetensors, written by hand ------------------------------------------


def tensor_bytes(t):
    """The raw little-endian bytes of a CPU tensor (without numpy)."""
    t = t.detach().cpu().contiguous()
    return ctypes.string_at(t.data_ptr(), t.numel() * t.element_size())


def save_safetensors(model, path):
    tensors = {k: v.detach().float().contiguous().cpu()
               for k, v in model.state_dict().items() if not k.endswith("num_batches_tracked")}
    header, offset, blobs = {}, 0, []
    for name in sorted(tensors):
        t = tensors[name]
        blob = tensor_bytes(t)
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [offset, offset + len(blob)]}
        offset += len(blob)
        blobs.append(blob)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for blob in blobs:
            f.write(blob)
    os.replace(tmp, path)


def load_safetensors(model, path):
    try:
        with open(path, "rb") as f:
            size = f.read(8)
            n = struct.unpack("<Q", size)[0] if len(size) == 8 else None
            header = json.loads(f.read(n)) if n is not None and n <= os.path.getsize(path) - 8 else None
            data = bytearray(f.read())
    except OSError as e:
        sys.exit(f"gpu_train: cannot read {path}: {e.strerror or e}")
    except ValueError:  # invalid JSON or UTF-8
        header = None
    if not isinstance(header, dict):
        sys.exit(f"gpu_train: {path} is not a safetensors file (its header is truncated or damaged)")
    state = model.state_dict()
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        try:
            dtype, shape, (b, e) = meta["dtype"], [int(d) for d in meta["shape"]], meta["data_offsets"]
        except (TypeError, KeyError, ValueError):
            sys.exit(f"gpu_train: {path}: the header entry of {name} is damaged")
        if dtype != "F32":
            sys.exit(f"gpu_train: {path}: {name} is {dtype}, expected F32")
        # A truncated file, or offsets that do not fit the shape, would
        # otherwise end in a view() traceback (or read another tensor's bytes).
        if not (isinstance(b, int) and isinstance(e, int) and 0 <= b <= e <= len(data)):
            sys.exit(f"gpu_train: {path}: {name} lies at bytes {b}..{e} of {len(data)}: "
                     f"the file is truncated or damaged")
        if min(shape, default=0) < 0:
            sys.exit(f"gpu_train: {path}: {name} has the shape {shape}")
        if e - b != 4 * math.prod(shape):
            sys.exit(f"gpu_train: {path}: {name} has {e - b} bytes, its shape {shape} needs {4 * math.prod(shape)}")
        t = torch.frombuffer(data[b:e], dtype=torch.float32).view(shape) if e > b \
            else torch.zeros(shape, dtype=torch.float32)
        if name not in state or list(state[name].shape) != list(t.shape):
            sys.exit(f"gpu_train: {path}: {name} does not fit a network of this size")
        state[name].copy_(t)
    # A smaller network's file fills only part of this one: the rest would
    # stay random without a word. (num_batches_tracked is PyTorch's own.)
    missing = sorted(
        name for name in state
        if name not in header and not name.endswith("num_batches_tracked")
    )
    if missing:
        sys.exit(
            f"gpu_train: {path} lacks {len(missing)} tensors of this network "
            f"(first: {missing[0]}): give --net the file's size"
        )


# --- training (src/train/trainer.rs) ----------------------------------------


def learning_rate(base, warmup, step, total):
    warm = (step + 1) / warmup if step < warmup else 1.0
    span = max(total - warmup, 1)
    progress = min(max((step - warmup) / span, 0.0), 1.0) if step >= warmup else 0.0
    return base * warm * (0.01 + 0.99 * 0.5 * (1.0 + math.cos(math.pi * progress)))


def epoch_plan(shards, batch_size, generator):
    batches = []
    for s, shard in enumerate(shards):
        order = torch.randperm(shard.count, generator=generator)
        batches += [(s, order[i:i + batch_size]) for i in range(0, shard.count, batch_size)]
    perm = torch.randperm(len(batches), generator=generator).tolist()
    return [batches[i] for i in perm]


@torch.no_grad()
def validate(model, shards, batch_size, autocast):
    model.eval()
    n, pl, vl, correct, value_correct = 0, 0.0, 0.0, 0.0, 0.0
    # The draws the value head predicts against the share of validation
    # positions from drawn games (drawn games are long, so that share is
    # far above the share of drawn games): a miscalibrated value head
    # shows here.
    draw_predicted, draw_actual = 0.0, 0.0
    for shard in shards:
        for i in range(0, shard.count, batch_size):
            rows = torch.arange(i, min(i + batch_size, shard.count), device=shard.packed.device)
            with autocast():
                p, v = model(shard.input(rows))
            move, wdl = shard.move[rows], shard.wdl[rows]
            k = len(rows)
            pl += F.cross_entropy(p, move).item() * k
            vl += F.cross_entropy(v, wdl).item() * k
            correct += (p.argmax(-1) == move).sum().item()
            value_correct += (v.argmax(-1) == wdl).sum().item()
            draw_predicted += v.float().softmax(-1)[:, 1].sum().item()
            draw_actual += (wdl == 1).sum().item()
            n += k
    model.train()
    if n == 0:
        return None
    return {"positions": n, "policy_loss": pl / n, "accuracy": correct / n,
            "value_loss": vl / n, "value_accuracy": value_correct / n,
            "draw_predicted": draw_predicted / n, "draw_actual": draw_actual / n}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("export", help="a directory written by wuzi-encode")
    ap.add_argument("--net", default="6x64", help="BLOCKSxCHANNELS")
    ap.add_argument("--init", help="continue from this safetensors network")
    ap.add_argument("--epochs", type=float, default=1.0)
    ap.add_argument("--max-steps", type=int)
    ap.add_argument("--max-minutes", type=float)
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--warmup-steps", type=int, default=200)
    ap.add_argument("--weight-decay", type=float, default=1e-4)
    ap.add_argument("--value-weight", type=float, default=1.0)
    ap.add_argument("--search-value-weight", type=float, default=0.5,
                    help="with soft targets: the share of the search's value in the value "
                         "target (the rest is the game result)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--precision", choices=["fp32", "bf16"],
                    help="compute precision (default: bf16 on CUDA, fp32 on the CPU)")
    ap.add_argument("--no-augment", action="store_true")
    ap.add_argument("--val-every", type=int, default=1000, help="validate every N steps")
    ap.add_argument("--out", required=True, help="output directory")
    ap.add_argument("--dump-eval", type=int, default=0, metavar="N",
                    help="after training, write the fp32 outputs on the first N validation "
                         "positions of the first shard to eval.bin (for the engine's cross-check)")
    ap.add_argument("--dump-symmetries", action="store_true",
                    help="write the first training position under each symmetry to symmetries.bin")
    args = ap.parse_args()

    torch.manual_seed(args.seed)
    generator = torch.Generator().manual_seed(args.seed)
    device = torch.device(args.device)
    precision = args.precision or ("bf16" if device.type == "cuda" else "fp32")
    os.makedirs(args.out, exist_ok=True)
    if device.type == "cuda":
        torch.backends.cudnn.benchmark = True
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True

    def autocast():
        return torch.autocast(device.type, dtype=torch.bfloat16, enabled=precision == "bf16")

    started = time.time()
    shards, orders = load_export(args.export, device)
    train = [s for s in shards if s.split == "train"]
    val = [s for s in shards if s.split == "val"]
    if not train:
        sys.exit("gpu_train: no training positions in the export")
    planes = train[0].planes
    blocks, channels = (int(x) for x in args.net.lower().split("x"))
    model = ResNet(planes, blocks, channels)
    if args.init:
        load_safetensors(model, args.init)
    model = model.to(device, memory_format=torch.channels_last)
    augmenter = Augmenter(orders)
    positions = sum(s.count for s in train)
    print(f"gpu_train: {args.net} ({sum(p.numel() for p in model.parameters())} parameters) "
          f"on {device} in {precision}; {positions} training positions, "
          f"{sum(s.count for s in val)} validation; loaded in {time.time() - started:.1f} s",
          flush=True)

    if args.dump_symmetries:
        shard = train[0]
        rows = torch.zeros(1, dtype=torch.long, device=device)
        with open(os.path.join(args.out, "symmetries.bin"), "wb") as f:
            for k in symmetries_for(shard.height, shard.width):
                soft = None if shard.soft_policy is None else shard.soft_policy[rows]
                x, move, soft = augmenter.apply(k, shard.input(rows), shard.move[rows], soft)
                f.write(struct.pack("<BI", k, int(move.item())))
                f.write(tensor_bytes(x.to(torch.uint8)))
                # With soft targets, the position's policy after the symmetry.
                if soft is not None:
                    f.write(tensor_bytes(soft))

    batches_per_epoch = sum(math.ceil(s.count / args.batch_size) for s in train)
    total = max(1, int(args.epochs * batches_per_epoch))
    step, samples, stop = 0, 0, f"{args.epochs} epochs done"
    if args.max_steps is not None and args.max_steps < total:
        total, stop = args.max_steps, f"--max-steps {args.max_steps} reached"
    warmup = min(args.warmup_steps, total // 10)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    deadline = started + 60 * args.max_minutes if args.max_minutes else None

    log_path = os.path.join(args.out, "loss.csv")
    log = open(log_path, "w", newline="")
    writer = csv.writer(log)
    writer.writerow(["step", "samples", "seconds", "lr", "train_policy_loss", "train_value_loss",
                     "train_accuracy", "val_policy_loss", "val_value_loss", "val_accuracy",
                     "val_value_accuracy"])
    window = [0.0, 0.0, 0.0, 0]
    train_started = time.time()
    # With --max-minutes the cosine schedule is fitted to the steps that the
    # time allows (re-estimated from the recent rate, which changes when jobs
    # share the GPU), so that the learning rate has decayed when time is up.
    epoch_total = total
    timed_from = (time.time(), 0)
    best_loss, best_step = math.inf, None
    best_path = os.path.join(args.out, "best.safetensors")
    model.train()
    while step < total:
        for s, rows in epoch_plan(train, args.batch_size, generator):
            if step >= total:
                break
            if deadline and time.time() >= deadline:
                stop = "--max-minutes reached"
                total = step
                break
            shard = train[s]
            rows = rows.to(device)
            x, move = shard.input(rows), shard.move[rows]
            soft = None if shard.soft_policy is None else shard.soft_policy[rows]
            if not args.no_augment:
                x, move, soft = augmenter.random(x, move, generator, soft)
            x = x.contiguous(memory_format=torch.channels_last)
            lr = learning_rate(args.lr, warmup, step, total)
            for group in opt.param_groups:
                group["lr"] = lr
            with autocast():
                p, v = model(x)
            if soft is None:
                policy_loss = F.cross_entropy(p, move)
                value_loss = F.cross_entropy(v, shard.wdl[rows])
            else:
                target = soft.float()
                target = target / target.sum(-1, keepdim=True).clamp(min=1.0)
                policy_loss = -(target * F.log_softmax(p.float(), -1)).sum(-1).mean()
                searched = shard.soft_wdl[rows].float()
                searched = searched / searched.sum(-1, keepdim=True).clamp(min=1.0)
                lam = args.search_value_weight
                value_target = (1 - lam) * F.one_hot(shard.wdl[rows], 3).float() + lam * searched
                value_loss = -(value_target * F.log_softmax(v.float(), -1)).sum(-1).mean()
            loss = policy_loss + args.value_weight * value_loss
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            step += 1
            samples += len(rows)
            # Every 100 steps, not only at validations: the first 100 include
            # start-up (cuDNN tuning), and a fit that came out below the next
            # validation would otherwise never be corrected.
            if deadline and step % 100 == 0:
                now = time.time()
                if step > timed_from[1]:
                    rate = (step - timed_from[1]) / max(now - timed_from[0], 1e-9)
                    fits = step + int(0.97 * rate * max(deadline - now, 0.0))
                    total = max(step + 1, min(epoch_total, fits))
                    if total < epoch_total:
                        stop = f"--max-minutes {args.max_minutes}: schedule fitted to the time"
                    warmup = min(warmup, max(total // 10, 1))
                timed_from = (now, step)
            window[0] += policy_loss.detach()
            window[1] += value_loss.detach()
            window[2] += (p.argmax(-1) == move).float().mean().detach()
            window[3] += 1
            last = step == total
            if step % args.val_every == 0 or last:
                if not math.isfinite(float(window[0])):
                    sys.exit(f"gpu_train: training diverged at step {step} (try a lower --lr)")
                metrics = validate(model, val, 4096, autocast) if val else None
                n = window[3]
                row = [step, samples, round(time.time() - train_started, 1), f"{lr:.3e}",
                       f"{float(window[0]) / n:.4f}", f"{float(window[1]) / n:.4f}",
                       f"{float(window[2]) / n:.4f}"]
                row += ([f"{metrics[k]:.4f}" for k in
                         ("policy_loss", "value_loss", "accuracy", "value_accuracy")]
                        if metrics else ["", "", "", ""])
                writer.writerow(row)
                log.flush()
                window = [0.0, 0.0, 0.0, 0]
                rate = samples / max(time.time() - train_started, 1e-9)
                print(f"step {step}/{total} epoch {samples / positions:.2f} lr {lr:.2e} "
                      f"train policy {row[4]} value {row[5]} acc {row[6]} | val "
                      + (f"policy {metrics['policy_loss']:.4f} acc {100 * metrics['accuracy']:.2f}% "
                         f"value {metrics['value_loss']:.4f} draws {100 * metrics['draw_predicted']:.1f}% "
                         f"(games {100 * metrics['draw_actual']:.1f}%)" if metrics else "-")
                      + f" | {rate:.0f} samples/s", flush=True)
                save_safetensors(model, os.path.join(args.out, "final.safetensors"))
                if metrics and metrics["policy_loss"] + metrics["value_loss"] < best_loss:
                    best_loss = metrics["policy_loss"] + metrics["value_loss"]
                    save_safetensors(model, best_path)
                    best_step = step
        if step >= total:
            break
    log.close()
    save_safetensors(model, os.path.join(args.out, "final.safetensors"))
    final = validate(model, val, 4096, autocast) if val else None
    if final and final["policy_loss"] + final["value_loss"] < best_loss:
        best_loss, best_step = final["policy_loss"] + final["value_loss"], step
        save_safetensors(model, best_path)
    summary = {"net": args.net, "device": str(device), "precision": precision, "steps": step,
               "samples": samples, "epochs": samples / positions, "stop": stop,
               "train_seconds": round(time.time() - train_started, 1),
               "samples_per_second": round(samples / max(time.time() - train_started, 1e-9)),
               "validation": final,
               "best": {"step": best_step, "policy_plus_value_loss": round(best_loss, 4)}
               if math.isfinite(best_loss) else None}
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    print("gpu_train: " + json.dumps(summary), flush=True)

    if args.dump_eval and val:
        model.eval()
        shard = val[0]
        rows = torch.arange(min(args.dump_eval, shard.count), device=device)
        with torch.no_grad():
            p, v = model(shard.input(rows).contiguous(memory_format=torch.channels_last))
        out = torch.cat([p.softmax(-1), v.softmax(-1)], dim=1).float().cpu().contiguous()
        with open(os.path.join(args.out, "eval.bin"), "wb") as f:
            f.write(struct.pack("<III", out.shape[0], shard.width, shard.height))
            f.write(tensor_bytes(out))


if __name__ == "__main__":
    main()

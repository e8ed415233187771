#!/usr/bin/env python3
"""A reader of m2n artifacts written from docs/artifact.md alone (not from
the C++ writer): it checks the header and the FNV-1a checksum, walks every
field and prints one line per reshard and per rank program, in the form
`m2n-artifact-dump` prints them, so that a lit test can compare the two.

  read_artifact.py FILE
"""
import struct
import sys

FNV_OFFSET_BASIS = 14695981039346656037
FNV_PRIME = 1099511628211
TYPES = ["i8", "i16", "i32", "i64", "f16", "bf16", "f32", "f64", "f8E4M3FN", "f8E5M2", "ui8",
         "f8E8M0FNU"]


def fnv1a(data: bytes) -> int:
    h = FNV_OFFSET_BASIS
    for at in range(0, len(data), 8):
        h ^= int.from_bytes(data[at:at + 8], "little")  # zero-padded
        h = (h * FNV_PRIME) % (1 << 64)
    return h


class Reader:
    def __init__(self, data: bytes):
        self.data, self.pos = data, 0

    def take(self, fmt: str):
        size = struct.calcsize("<" + fmt)
        if self.pos + size > len(self.data):
            sys.exit("truncated artifact")
        value = struct.unpack_from("<" + fmt, self.data, self.pos)
        self.pos += size
        return value[0] if len(value) == 1 else value

    def string(self) -> bytes:
        n = self.take("Q")
        value = self.data[self.pos:self.pos + n]
        self.pos += n
        return value

    def ints(self):
        return [self.take("q") for _ in range(self.take("I"))]

    def layout(self):
        shape, ranks = self.ints(), self.ints()
        placements = [(self.take("Bq B"), self.ints())
                      for _ in range(self.take("I"))]
        return shape, ranks, placements

    def buffer(self):
        return self.take("Bqq")

    def movement(self):
        self.buffer(), self.take("q"), self.buffer(), self.take("q")
        nbytes = self.take("q")
        mechanism = self.take("B")
        kind = self.take("B")  # 0 move, 1 amax, 2 scale
        if self.take("B"):
            self.take("qqq")  # block lookup: entry, phase, width
        if mechanism == 1:
            self.take("qq"), self.ints(), self.ints()
        self.take("B")  # op
        if self.take("B"):
            self.take("qq")
        for _ in range(self.take("I")):
            self.take("qqQ")
        if self.take("B"):
            self.take("qq")
        if self.take("B"):
            self.buffer()  # accumulator
        self.take("q")  # step
        for _ in range(self.take("I")):
            self.take("qqqqq")  # count, src stride, dst stride, dim, entry stride
        return mechanism, nbytes, kind


def main():
    data = open(sys.argv[1], "rb").read()
    if data[:4] != b"M2NA":
        sys.exit("bad magic")
    version, size, checksum = struct.unpack_from("<IQQ", data, 4)
    payload = data[24:]
    if version != 19 or size != len(payload) or fnv1a(payload) != checksum:
        sys.exit(f"bad header: version {version}, size {size}, checksum {checksum:#x}")
    r = Reader(payload)
    r.string(), r.string(), r.string()  # ptx, chip, kernel name
    threads, ctas, stage_bytes, stages = r.take("I"), r.take("I"), r.take("Q"), r.take("I")
    walkers = r.take("I")
    print(f"kernel: {ctas} CTAs x {threads} threads, {stages} stages of {stage_bytes} bytes, "
          f"up to {walkers} walkers")
    # The reshards (a name and a program index), then each program once.
    reshards = [(r.string().decode(), r.take("I")) for _ in range(r.take("I"))]
    programs = []
    for _ in range(r.take("I")):
        element = TYPES[r.take("I")]
        source = r.take("I")  # The cast's source type (0xFFFFFFFF: none) and scale.
        scale = r.take("f")
        if source != 0xFFFFFFFF:
            element = f"{TYPES[source]} -> {element} x {scale:g}"
        scaling, block_rows, block_cols = r.take("B"), r.take("q"), r.take("q")
        if scaling:
            mode = ["tensor", f"block({block_rows}, {block_cols})", "mx"][scaling - 1]
            element = element.replace(f" x {scale:g}", "") + f" scaling {mode}"
        shape = r.ints()
        r.layout(), r.layout()
        strategy = r.string().decode()
        alignment = r.take("q")
        for _ in range(r.take("I")):
            r.take("q"), r.ints(), r.take("B")  # rank, shape, holds amaxes
        for _ in range(r.take("I")):
            r.buffer(), r.ints(), r.ints()
        lines = [f"{element}[{'x'.join(map(str, shape))}] {strategy}, "
                 f"buffers aligned to {alignment}"]
        for _ in range(r.take("I")):
            rank, counters = r.take("q"), r.take("q")
            threads, walkers, stage = r.take("I"), r.take("I"), r.take("Q")
            lists = [[r.movement() for _ in range(r.take("I"))] for _ in range(3)]
            # Each list holds its own mechanisms: kernel items 0-2 (bulk,
            # tile, vector), network receives 4, copy-engine copies 3.
            for mechanisms, movements in zip(({0, 1, 2}, {4}, {3}), lists):
                if any(m not in mechanisms for m, _, _ in movements):
                    sys.exit(f"rank {rank}: a movement outside its mechanism's list")
            kinds = sum(kind > 0 for _, _, kind in lists[0])
            lines.append(f"  rank {rank}: {counters} counters, {len(lists[0])} items, "
                         f"{len(lists[1])} receives, {len(lists[2])} engine copies; "
                         f"launch {walkers} x {threads} threads, stages of {stage} B"
                         + (f"; {kinds} amax or scale items" if kinds else ""))
        programs.append(lines)
    for name, program in reshards:
        if program >= len(programs):
            sys.exit(f"reshard {name} names a missing program")
        lines = programs[program]
        print(f"reshard {name}: {lines[0]}")
        for line in lines[1:]:
            print(line)
    # The groups: a name and member reshards, in the group's order.
    for _ in range(r.take("I")):
        name = r.string().decode()
        members = [r.take("I") for _ in range(r.take("I"))]
        if any(m >= len(reshards) for m in members):
            sys.exit(f"group {name} names a missing reshard")
        print(f"group {name}: " + ", ".join(reshards[m][0] for m in members))
    if r.pos != len(payload):
        sys.exit("bytes after the last group")


if __name__ == "__main__":
    main()

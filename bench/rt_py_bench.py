# rt_py_bench.py — a deterministic, pure-Python steady-state workload for
# bench/rt_overhead.sh (instruction counts of CPython under cachegrind).
# Only builtins, no imports: it runs on a bare `make python` build tree.
# It mixes what interpreters spend their time on: method calls on small
# objects (a task scheduler), recursion, dict/str/list work, generators,
# closures and exceptions. Usage: python rt_py_bench.py [ROUNDS]
# Prints one checksum, identical for every build (run with PYTHONHASHSEED=0).
import sys


class Packet:
    __slots__ = ("link", "ident", "kind", "datum", "data")

    def __init__(self, link, ident, kind):
        self.link = link
        self.ident = ident
        self.kind = kind
        self.datum = 0
        self.data = [0] * 4

    def append_to(self, queue):
        self.link = None
        if queue is None:
            return self
        p = queue
        while p.link is not None:
            p = p.link
        p.link = self
        return queue


class Task:
    def __init__(self, sched, ident, prio, queue):
        self.sched = sched
        self.ident = ident
        self.prio = prio
        self.queue = queue
        self.held = False
        self.waiting = queue is not None

    def runnable(self):
        return not self.held and (self.queue is not None or not self.waiting)

    def take(self):
        p = self.queue
        self.queue = p.link
        self.waiting = self.queue is not None and False
        return p


class Worker(Task):
    def __init__(self, sched, ident, prio, queue):
        super().__init__(sched, ident, prio, queue)
        self.dest = 2
        self.count = 0

    def run(self, pkt):
        if pkt is None:
            self.waiting = True
            return None
        self.dest = 3 if self.dest == 2 else 2
        pkt.ident = self.dest
        pkt.datum = 0
        for i in range(4):
            self.count += 1
            if self.count > 26:
                self.count = 1
            pkt.data[i] = 64 + self.count
        return self.sched.send(pkt, self.dest)


class Handler(Task):
    def run(self, pkt):
        if pkt is not None:
            self.sched.done += pkt.datum + sum(pkt.data)
            pkt.datum += 1
            if pkt.datum < 3:
                return self.sched.send(pkt, 1)
        self.waiting = True
        return None


class Scheduler:
    def __init__(self):
        self.tasks = {}
        self.done = 0
        self.switches = 0

    def send(self, pkt, dest):
        t = self.tasks[dest]
        t.queue = pkt.append_to(t.queue)
        t.waiting = False
        return t

    def schedule(self, limit):
        order = sorted(self.tasks.values(), key=lambda t: -t.prio)
        steps = 0
        while steps < limit:
            progressed = False
            for t in order:
                if t.runnable():
                    pkt = t.take() if t.queue is not None else None
                    t.run(pkt)
                    self.switches += 1
                    progressed = True
                    steps += 1
            if not progressed:
                break
        return self.done


def scheduler_round(n):
    s = Scheduler()
    s.tasks[1] = Worker(s, 1, 100, None)
    s.tasks[2] = Handler(s, 2, 200, None)
    s.tasks[3] = Handler(s, 3, 300, None)
    for k in range(n):
        s.send(Packet(None, 1, k & 1), 1)
    return s.schedule(60 * n) + s.switches


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def text_round(n):
    words = {}
    line = "the quick brown fox jumps over the lazy dog and keeps on running"
    for i in range(n):
        for w in line.split():
            key = w + str(i % 7)
            words[key] = words.get(key, 0) + len(w)
    parts = ["%s=%d" % (k, v) for k, v in sorted(words.items())]
    joined = ",".join(parts).upper().replace("=", ":")
    return len(joined) + sum(ord(c) for c in joined[:200])


def gen_round(n):
    def squares(limit):
        for i in range(limit):
            yield i * i

    def make_adder(k):
        return lambda x: x + k

    adders = [make_adder(k) for k in range(8)]
    total = 0
    for v in squares(n):
        total += adders[v & 7](v) % 1009
    evens = [x for x in range(n) if x % 3 == 0]
    table = {x: x * 2 for x in evens[:500]}
    return total + len(evens) + sum(table.values())


def exc_round(n):
    caught = 0
    for i in range(n):
        try:
            if i % 5 == 0:
                raise ValueError(i)
            caught += int("1" + str(i % 10))
        except ValueError as e:
            caught += e.args[0] & 3
    return caught


def sort_round(n):
    seed = 12345
    data = []
    for _ in range(n):
        seed = (seed * 1103515245 + 12345) & 0x7FFFFFFF
        data.append((seed % 1000, seed))
    data.sort()
    tuples = sorted(data, key=lambda t: (t[1] % 97, t[0]))
    return data[n // 2][0] + tuples[0][1] % 1000


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    check = 0
    for r in range(rounds):
        check += scheduler_round(120)
        check += fib(22)
        check += text_round(1000)
        check += gen_round(20000)
        check += exc_round(12000)
        check += sort_round(5000)
        check &= 0xFFFFFFFF
    print(check)


main()

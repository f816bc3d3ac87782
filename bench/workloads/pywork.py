"""Dict, list and string churn for the benchmark: builds word counts from generated text,
sorts and joins them, and keeps a sliding window of small dicts alive so the allocator sees
both short-lived and longer-lived objects.

    python3 pywork.py [rounds]      default 40
"""
import sys


def one_round(seed):
    words = ["w%d_%d" % (seed, (i * 2654435761) % 5003) for i in range(20000)]
    counts = {}
    for w in words:
        counts[w] = counts.get(w, 0) + 1
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    text = " ".join(w.upper() for w, _ in ranked[:2000])
    parts = text.split(" ")
    return len(parts) + sum(len(p) for p in parts)


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    window = []
    total = 0
    for r in range(rounds):
        total += one_round(r)
        window.append({"round": r, "keys": [str(k) for k in range(500)]})
        if len(window) > 8:
            window.pop(0)
    print("pywork: %d rounds, checksum %d" % (rounds, total))


if __name__ == "__main__":
    main()

# python3 doing dict and list work, traced and untraced.
[ -x "${PYTHON3:-}" ] || skip "python3 not found"
real_program "$PYTHON3" -c '
import json
d = {str(i): [i] * (i % 7) for i in range(50000)}
l = sorted(d.items(), key=lambda kv: (len(kv[1]), kv[0]))
s = json.dumps(l[:1000])
print(len(d), len(l), len(s), sum(len(v) for v in d.values()))
'

# A small real-interpreter workload for queries.agree: deep and varied stacks, many short-lived
# objects, some kept to the end.
import json

kept = []
for i in range(300):
    text = json.dumps({"n": i, "items": list(range(i % 50)), "name": "item%d" % i})
    if i % 10 == 0:
        kept.append(json.loads(text))
print(len(kept))

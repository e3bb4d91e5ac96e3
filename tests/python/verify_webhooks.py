"""Verifies webhook deliveries with the Standard Webhooks reference library.

Reads one JSON object per line on stdin: {"secret", "headers": {...}, "body": "<text>"}.
Prints the number verified; exits 1 naming the first delivery that does not verify, and 2 if a
tampered copy of any delivery verifies (the check must be able to fail).
"""
import json
import sys

from standardwebhooks.webhooks import Webhook, WebhookVerificationError

verified = 0
for n, line in enumerate(sys.stdin):
    if not line.strip():
        continue
    d = json.loads(line)
    hook = Webhook(d["secret"])
    try:
        payload = hook.verify(d["body"], d["headers"])
    except WebhookVerificationError as e:
        print(f"delivery {n} does not verify: {e}")
        sys.exit(1)
    assert payload["specversion"] == "1.0", payload
    try:
        hook.verify(d["body"] + " ", d["headers"])
        print(f"a tampered copy of delivery {n} verified")
        sys.exit(2)
    except WebhookVerificationError:
        pass
    verified += 1
print(verified)

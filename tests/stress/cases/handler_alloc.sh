# Signal handlers that allocate and free while their thread is inside the tracer (2,000
# signals): every call is recorded, the handler's blocks freed later by the thread pair with
# their allocations, nothing is lost.
. "$CASES/handlers.inc"
handler_case alloc 2000

# A handler that leaves the interrupted call with siglongjmp, 300 times: the thread keeps
# recording (every completed call is in the recording) and the recording stays consistent.
. "$CASES/handlers.inc"
handler_case longjmp 300

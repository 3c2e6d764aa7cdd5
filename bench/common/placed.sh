# Sourced by bench scripts: wait_placed URL PODS waits (at most 120 s) until every one of
# PODS pods' jobs is placed (Scheduled or Running, from /metrics); returns 1 when they
# were not. placed URL prints how many are.
placed() {
  curl -sS "$1/metrics" |
    awk '$1 == "muster_jobs{state=\"Scheduled\"}" || $1 == "muster_jobs{state=\"Running\"}" { n += $2 } END { print n + 0 }'
}
wait_placed() {
  for _ in $(seq 1200); do
    [ "$(placed "$1")" = "$2" ] && return 0
    sleep 0.1
  done
  return 1
}

# Sidekiq::Stats and Sidekiq::Stats::History.new(DAYS, default 1).
require_relative "common"
stats = Sidekiq::Stats.new
history = Sidekiq::Stats::History.new(Integer(ARGV.fetch(0, "1")))
emit({
  "processed" => stats.processed, "failed" => stats.failed, "enqueued" => stats.enqueued,
  "retry_size" => stats.retry_size, "dead_size" => stats.dead_size, "processes_size" => stats.processes_size,
  "workers_size" => stats.workers_size,
  "history_processed" => history.processed, "history_failed" => history.failed
})

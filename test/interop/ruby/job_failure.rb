# Fails a job through Sidekiq 6.4's own JobRetry (the code its Processor runs
# around perform), so the retry or dead entry is exactly what Ruby writes,
# compressed backtrace included.  Usage: job_failure.rb '<payload json>' MESSAGE
require_relative "common"
require "sidekiq/job_retry"
payload = arg_json(0)
klass = Object.const_set(payload.fetch("class"), Class.new { include Sidekiq::Worker })
def fail_deeply(message, depth = 3)
  depth.zero? ? raise(ArgumentError, message) : fail_deeply(message, depth - 1)
end
begin
  Sidekiq::JobRetry.new.local(klass.new, Sidekiq.dump_json(payload), payload.fetch("queue", "default")) do
    fail_deeply(ARGV.fetch(1))
  end
rescue Sidekiq::JobRetry::Skip
  emit(true)
end

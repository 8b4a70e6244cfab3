# Shared setup for the interop scripts: Sidekiq 6.4's client and API on
# ENV["REDIS_URL"] (a private test server, never the default one), quiet
# logs, and JSON output. Each script prints one JSON document on stdout.
require "json"
require "sidekiq"
require "sidekiq/api"

REDIS_URL = ENV.fetch("REDIS_URL") { abort "REDIS_URL is required" }
Redis.silence_deprecations = true # redis-rb 4.8 warns about calls Sidekiq 6.4 makes
Sidekiq.redis = { url: REDIS_URL, size: 5 }
Sidekiq.logger.level = Logger::WARN

def emit(value)
  $stdout.puts JSON.generate(value)
  $stdout.flush
end

def arg_json(index)
  JSON.parse(ARGV.fetch(index))
end

# What the API makes of one job (a JobRecord or SortedEntry), including the
# raw types of the time fields: a Float proves the ".0" rule held.
def record(job)
  item = job.item
  {
    "class" => job.klass, "display_class" => job.display_class, "display_args" => job.display_args,
    "args" => job.args, "jid" => job.jid, "queue" => job.queue,
    "enqueued_at" => job.enqueued_at&.to_f, "created_at" => job.created_at&.to_f,
    "enqueued_at_type" => item["enqueued_at"].class.name, "created_at_type" => item["created_at"].class.name,
    "latency" => job.latency,
    "error_class" => item["error_class"], "error_message" => item["error_message"],
    "retry_count" => item["retry_count"], "failed_at_type" => item["failed_at"].class.name,
    "error_backtrace" => begin
      job.error_backtrace
    rescue => e
      "undecodable: #{e.class}: #{e.message}"
    end,
    "at" => job.respond_to?(:at) ? job.at.to_f : nil,
    "score" => job.respond_to?(:score) ? job.score : nil,
    "item" => item
  }
end

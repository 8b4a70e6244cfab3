# Reads a queue's time fields as Sidekiq 8 would. Sidekiq 8 is not installed
# here, so its reader is transcribed: JobRecord#time_from_timestamp from
# sidekiq/sidekiq v8.1.7 lib/sidekiq/api.rb (a Float is epoch seconds, an
# Integer epoch milliseconds). Parsing is the same Sidekiq.load_json (JSON.parse).
# Usage: sidekiq8_times.rb QUEUE   Prints [{jid, enqueued_at, created_at}] in epoch seconds.
require_relative "common"

def time_from_timestamp(timestamp)
  if timestamp.is_a?(Float)
    # old format, timestamps were stored as fractional seconds since the epoch
    Time.at(timestamp).utc
  else
    Time.at(timestamp / 1000, timestamp % 1000, :millisecond)
  end
end

raws = Sidekiq.redis { |c| c.lrange("queue:#{ARGV.fetch(0)}", 0, -1) }
emit(raws.map { |raw|
  item = Sidekiq.load_json(raw)
  {
    "jid" => item["jid"],
    "enqueued_at" => time_from_timestamp(item["enqueued_at"]).to_f,
    "created_at" => time_from_timestamp(item["created_at"]).to_f
  }
})

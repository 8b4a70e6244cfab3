# Sidekiq 8.1's iterable-job state code, transcribed line for line with plain
# Redis calls: Debian's Sidekiq is 6.4, which has no iterable jobs, but the
# state is four hash fields written by a few commands, and the JSON and Float
# text come from this real Ruby. Sources (sidekiq/sidekiq, lib/sidekiq/):
#   job/iterable.rb   Iterable#flush_state, #is_cancelled?, STATE_TTL
#   client.rb         Client#cancel!(jid)
#   api.rb            IterableJobQuery::State (what the Busy and Retries pages show)
# Sidekiq 8 runs on redis-client, where `p.expire(key, ttl, "nx")` sends
# EXPIRE key ttl NX; redis-rb 4.8 spells that `call`.
#
# Usage: ruby iterable_state.rb <mode> <jid> [json arguments]
#   cancel <jid>                              Client#cancel!(jid)
#   flush <jid> <executions> <cursor-json> <runtime-text>
#                                             Iterable#flush_state with those values
#   read <jid>                                IterableJobQuery.new([jid])[jid] and is_cancelled?
#   floats <json array of numbers>            Float#to_s of each (what rt holds)
require_relative "common"

STATE_TTL = 30 * 24 * 60 * 60 # Sidekiq::Job::Iterable::STATE_TTL

mode = ARGV.fetch(0)
jid = ARGV[1]
key = "it-#{jid}"

case mode
when "cancel"
  # Sidekiq::Client#cancel!
  _, result, _ = Sidekiq.redis do |c|
    c.pipelined do |p|
      p.hsetnx(key, "cancelled", Time.now.to_i)
      p.hget(key, "cancelled")
      p.call("EXPIRE", key, STATE_TTL, "NX")
    end
  end
  emit({"cancelled" => result.to_i, "ttl" => Sidekiq.redis { |c| c.ttl(key) }})
when "flush"
  # Iterable#flush_state, for @_executions, @_cursor and @_runtime as given
  executions = Integer(ARGV.fetch(2))
  cursor = JSON.parse(ARGV.fetch(3), quirks_mode: true)
  runtime = Float(ARGV.fetch(4))
  state = {
    "ex" => executions,
    "c" => Sidekiq.dump_json(cursor),
    "rt" => runtime
  }
  result = Sidekiq.redis do |conn|
    conn.multi do |pipe|
      pipe.hset(key, state)
      pipe.call("EXPIRE", key, STATE_TTL, "NX")
      pipe.hget(key, "cancelled")
    end
  end
  emit({"cancelled" => result[2], "hash" => Sidekiq.redis { |c| c.hgetall(key) }, "ttl" => Sidekiq.redis { |c| c.ttl(key) }})
when "read"
  # Sidekiq::IterableJobQuery::State, and Iterable#is_cancelled?
  raw = Sidekiq.redis { |c| c.hgetall(key) }
  cursor = begin
    Sidekiq.load_json(raw["c"])
  rescue JSON::ParserError, TypeError
    raw["c"]
  end
  emit({
    "exists" => !raw.empty?,
    "executions" => raw["ex"].to_i,
    "runtime" => raw["rt"].to_f,
    "cursor" => cursor,
    "cancelled" => raw["cancelled"]&.to_i,
    "is_cancelled" => Sidekiq.redis { |c| c.hget(key, "cancelled") }
  })
when "floats"
  emit(JSON.parse(ARGV.fetch(1)).map { |x| Float(x).to_s })
else
  abort "unknown mode #{mode}"
end

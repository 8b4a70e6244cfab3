# Drives sidekiq-cron 1.8 (Debian's ruby-sidekiq-cron) for the periodic
# interop test, with Time.now frozen at ENV["NOW"] (epoch seconds) so Ruby's
# poller and edgekiq's claims meet at chosen ticks. Usage:
#   periodic_cron.rb create NAME CRON CLASS   saves a sidekiq-cron job
#   periodic_cron.rb poll                     one pass of sidekiq-cron's poller
#   periodic_cron.rb disable NAME             as its Web UI's "Disable" button
#   periodic_cron.rb show NAME                what its Web UI shows: last enqueue time, jid history
require_relative "common"
require "sidekiq/cron/job"
require "sidekiq/cron/poller"

FROZEN = Time.at(Float(ENV.fetch("NOW"))).utc
class << Time
  def now
    FROZEN
  end
end

case ARGV[0]
when "create"
  job = Sidekiq::Cron::Job.new("name" => ARGV[1], "cron" => ARGV[2], "class" => ARGV[3], "args" => ["ruby"])
  emit(job.save ? "ok" : job.errors)
when "poll"
  Sidekiq::Cron::Poller.new({}).enqueue
  emit("ok")
when "disable"
  Sidekiq::Cron::Job.find(ARGV[1]).disable!
  emit("ok")
when "show"
  job = Sidekiq::Cron::Job.find(ARGV[1])
  emit({
    "status" => job.status,
    "last_enqueue_time" => job.last_enqueue_time&.to_i,
    "jid_history" => job.jid_history_from_redis
  })
else
  abort "unknown command #{ARGV[0].inspect}"
end

# Ruby Sidekiq 6.4 as a client and API reader, for edgekiq's interop tests.
# Usage: ruby peer_client.rb <command> '<json argument>'; prints JSON.
require "json"
require "sidekiq"
require "sidekiq/api"

Sidekiq.configure_client { |c| c.redis = { url: ENV.fetch("REDIS_URL") } }
Sidekiq.logger.level = Logger::WARN

def record(j)
  {
    "class" => j.klass, "display_class" => j.display_class, "args" => j.args, "jid" => j.jid, "queue" => j.queue,
    "enqueued_at" => j.enqueued_at&.to_f, "created_at" => j.created_at&.to_f,
    "enqueued_at_is_float" => j["enqueued_at"].is_a?(Float), "created_at_is_float" => j["created_at"].is_a?(Float),
    "error_class" => j["error_class"], "error_message" => j["error_message"], "retry_count" => j["retry_count"],
    "error_backtrace" => (j.error_backtrace rescue "undecodable"),
    "at" => (j.respond_to?(:at) ? j.at.to_f : nil), "item" => j.item
  }
end

cmd, arg = ARGV[0], JSON.parse(ARGV[1] || "null")
out =
  case cmd
  when "push"
    arg.map { |item| Sidekiq::Client.push(item) }
  when "queue"
    Sidekiq::Queue.new(arg).map { |j| record(j) }
  when "retries" then Sidekiq::RetrySet.new.map { |j| record(j) }
  when "dead" then Sidekiq::DeadSet.new.map { |j| record(j) }
  when "retry_all" then Sidekiq::RetrySet.new.retry_all; true
  when "kill"
    Sidekiq::DeadSet.new.kill(Sidekiq.dump_json(arg), notify_failure: false); true
  when "processes"
    Sidekiq::ProcessSet.new.map { |p| p.instance_variable_get(:@attribs).merge("stopping" => p.stopping?) }
  when "workers"
    Sidekiq::Workers.new.map { |process, tid, work| { "process" => process, "tid" => tid, "work" => work } }
  when "signal"
    p = Sidekiq::ProcessSet.new.find { |pr| pr["identity"] == arg["identity"] }
    p ? (arg["sig"] == "quiet" ? p.quiet! : p.stop!) : nil
    !p.nil?
  when "stats"
    s = Sidekiq::Stats.new
    h = Sidekiq::Stats::History.new(1)
    { "processed" => s.processed, "failed" => s.failed, "history_processed" => h.processed, "history_failed" => h.failed }
  else
    raise "unknown command #{cmd}"
  end
puts JSON.generate(out)

# Writes one genuine Sidekiq 6.4 heartbeat without running a launcher: the
# `processes` entry, the process hash and the `<identity>:workers` hash, by
# Sidekiq::Launcher's own heartbeat code, with one job marked in flight the way
# Sidekiq::Processor#stats marks it.
# Usage: heartbeat.rb '<payload json>' QUEUE   Prints {identity, tid, run_at}.
require_relative "common"
require "sidekiq/launcher"

Sidekiq.options[:queues] = [ARGV.fetch(1), "low"]
Sidekiq.options[:concurrency] = 7
Sidekiq.options[:tag] = "rails-app"
Sidekiq.options[:labels] = ["ruby"]
launcher = Sidekiq::Launcher.new(Sidekiq.options)
tid = "2ayy"
run_at = Time.now.to_i
Sidekiq::Processor::WORKER_STATE.set(tid, { queue: ARGV.fetch(1), payload: Sidekiq.dump_json(arg_json(0)), run_at: run_at })
launcher.send(:heartbeat)
emit({ "identity" => launcher.identity, "tid" => tid, "run_at" => run_at, "pid" => ::Process.pid })

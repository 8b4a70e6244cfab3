# A Ruby Sidekiq 6.4 worker process: Sidekiq::Launcher embedded in this
# script, as `sidekiq` (the CLI) runs it. Every job it runs, of any class in
# JOB_CLASSES, is recorded as JSON {runner, jid, class, args, queue, at} with RPUSH
# to the list RESULT_KEY. Prints {"ready":true,"identity":...} once running;
# quiets on TSTP (as the CLI does: a remote quiet arrives as that signal); stops on TERM (or after
# MAX_SECONDS) and prints {"stopped":true}.
#
# env: REDIS_URL, QUEUES (comma list, default "default"), CONCURRENCY (5),
#      JOB_CLASSES (comma list), RESULT_KEY ("ruby:ran"), JOB_SLEEP_MS (0),
#      POLL_INTERVAL (seconds, default 0.5), MAX_SECONDS (60)
require "json"
require "sidekiq"
require "sidekiq/api"
require "sidekiq/launcher"

concurrency = Integer(ENV.fetch("CONCURRENCY", "5"))
Redis.silence_deprecations = true # redis-rb 4.8 warns about calls Sidekiq 6.4 makes
Sidekiq.redis = { url: ENV.fetch("REDIS_URL"), size: concurrency + 5 }
# Sidekiq logs to stdout by default; keep stdout for this script's JSON lines.
Sidekiq.logger = Sidekiq::Logger.new($stderr)
Sidekiq.logger.level = Logger::WARN

Sidekiq.options[:queues] = ENV.fetch("QUEUES", "default").split(",")
Sidekiq.options[:concurrency] = concurrency
Sidekiq.options[:timeout] = 5
# A fixed poll interval, as `poll_interval_average` in sidekiq.yml: the
# scheduler promotes `schedule` and `retry` about every POLL_INTERVAL seconds.
Sidekiq.options[:poll_interval_average] = Float(ENV.fetch("POLL_INTERVAL", "0.5"))
# Sidekiq 6.4's poller also sleeps rand(5) s before its first poll; skip that
# so tests need not wait for it. The polling itself is untouched.
Sidekiq::Scheduled::Poller.prepend(Module.new { def initial_wait; end })

RESULT_KEY = ENV.fetch("RESULT_KEY", "ruby:ran")
SLEEP = Float(ENV.fetch("JOB_SLEEP_MS", "0")) / 1000

# The job classes an app would define; each one records what it ran.
module Recorder
  def perform(*args)
    sleep(SLEEP) if SLEEP > 0
    entry = {
      "runner" => "ruby", "jid" => jid, "class" => self.class.name, "args" => args, "queue" => @queue_name,
      "at" => Time.now.to_f
    }
    Sidekiq.redis { |c| c.rpush(RESULT_KEY, JSON.generate(entry)) }
  end
end
# Sidekiq 6.4 does not tell a job its queue; a server middleware does.
class QueueCapture
  def call(worker, _job, queue)
    worker.instance_variable_set(:@queue_name, queue)
    yield
  end
end
Sidekiq.server_middleware { |chain| chain.add QueueCapture }
ENV.fetch("JOB_CLASSES", "").split(",").each do |name|
  Object.const_set(name, Class.new {
    include Sidekiq::Worker
    include Recorder
  })
end

launcher = Sidekiq::Launcher.new(Sidekiq.options)
reader, writer = IO.pipe
%w[TERM INT].each { |sig| trap(sig) { writer.write_nonblock("x") rescue nil } }
# As the sidekiq CLI: TSTP quiets (a remote `quiet` arrives as this signal, sent by the heartbeat).
trap("TSTP") { writer.write_nonblock("q") rescue nil }
launcher.run
$stdout.puts JSON.generate({ "ready" => true, "identity" => launcher.identity, "pid" => ::Process.pid })
$stdout.flush
deadline = Time.now + Float(ENV.fetch("MAX_SECONDS", "60"))
while (left = deadline - Time.now) > 0
  break unless IO.select([reader], nil, nil, left)
  break unless reader.read_nonblock(1) == "q"
  launcher.quiet
end
launcher.stop
$stdout.puts JSON.generate({ "stopped" => true })
$stdout.flush

# A Ruby Sidekiq 6.4 worker process (Launcher embedded, as `sidekiq` itself
# runs it). Every job it runs is recorded in the list `ruby:ran` as JSON
# {jid, class, args}. Stops on TERM, or after MAX_SECONDS.
# env: REDIS_URL, QUEUES (comma list), CONCURRENCY, MAX_SECONDS
require "json"
require "sidekiq"
require "sidekiq/launcher"

Sidekiq.configure_server { |c| c.redis = { url: ENV.fetch("REDIS_URL") } }
Sidekiq.configure_client { |c| c.redis = { url: ENV.fetch("REDIS_URL") } }
Sidekiq.logger.level = Logger::WARN

# One job class records for every class name edgekiq may push to Ruby.
class RubyEcho
  include Sidekiq::Worker
  def perform(*args)
    Sidekiq.redis { |c| c.rpush("ruby:ran", JSON.generate({ "jid" => jid, "class" => self.class.name, "args" => args })) }
  end
end
HardJob = Class.new(RubyEcho)
SharedJob = Class.new(RubyEcho)

Sidekiq.options[:queues] = ENV.fetch("QUEUES", "default").split(",")
Sidekiq.options[:concurrency] = Integer(ENV.fetch("CONCURRENCY", "2"))
Sidekiq.options[:poll_interval_average] = 0.5
Sidekiq.options[:timeout] = 5
launcher = Sidekiq::Launcher.new(Sidekiq.options)
reader, writer = IO.pipe
trap("TERM") { writer.puts("TERM") }
launcher.run
$stdout.puts "ready"
$stdout.flush
IO.select([reader], nil, nil, Float(ENV.fetch("MAX_SECONDS", "60")))
launcher.stop
$stdout.puts "stopped"

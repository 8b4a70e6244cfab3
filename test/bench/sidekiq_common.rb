# frozen_string_literal: true

# Shared helpers for the Ruby Sidekiq benchmark scripts: argument parsing,
# the Redis pool, an embedded Sidekiq::Launcher, INFO-based command counts,
# RSS, and the final JSON line. Sidekiq 6.x API (Debian's ruby-sidekiq).

require "json"
require "logger"
require "sidekiq"
require "sidekiq/api"
require "sidekiq/launcher"

module Bench
  module_function

  # --name value pairs from ARGV.
  def args
    out = {}
    i = 0
    while i < ARGV.size
      a = ARGV[i]
      if a.start_with?("--")
        nxt = ARGV[i + 1]
        if nxt.nil? || nxt.start_with?("--")
          out[a[2..]] = "true"
        else
          out[a[2..]] = nxt
          i += 1
        end
      end
      i += 1
    end
    out
  end

  def configure(url, pool_size)
    # redis-rb 4.8 prints a deprecation warning on every BRPOP Sidekiq 6.4
    # sends; writing ~1 line per job to stderr would slow Sidekiq down unfairly.
    Redis.silence_deprecations = true if Redis.respond_to?(:silence_deprecations=)
    Sidekiq.redis = {url: url, size: pool_size}
    Sidekiq.logger.level = Logger::WARN
  end

  def server_commands
    info = Sidekiq.redis { |c| c.info("stats") }
    Integer(info["total_commands_processed"])
  end

  def rss_mb
    kb = File.read("/proc/self/status")[/VmRSS:\s+(\d+)/, 1].to_i
    (kb / 1024.0).round(1)
  end

  def now
    Process.clock_gettime(Process::CLOCK_MONOTONIC)
  end

  # Starts an embedded launcher (the same objects `sidekiq` CLI builds).
  def launcher(concurrency, queues = ["default"])
    Sidekiq.options[:concurrency] = concurrency
    Sidekiq.options[:queues] = queues
    Sidekiq.options[:timeout] = 5
    Sidekiq::Launcher.new(Sidekiq.options)
  end

  def emit(result)
    $stdout.puts(JSON.generate(result))
    $stdout.flush
    exit!(0)
  end

  # Runs the block with an internal deadline; any error is the last line.
  def main
    a = args
    limit = Float(a.fetch("deadline", "600"))
    Thread.new do
      sleep limit
      $stdout.puts(JSON.generate(error: "internal deadline of #{limit} s passed"))
      $stdout.flush
      exit!(2)
    end
    emit(yield(a))
  rescue => e
    warn e.full_message
    $stdout.puts(JSON.generate(error: e.message))
    $stdout.flush
    exit!(1)
  end

  # Counts performed jobs; the main thread waits for the N-th.
  class Counter
    def initialize(target)
      @target = target
      @count = 0
      @lock = Mutex.new
      @done = ConditionVariable.new
    end

    def increment
      @lock.synchronize do
        @count += 1
        @done.broadcast if @count == @target
      end
    end

    def wait(timeout)
      deadline = Bench.now + timeout
      @lock.synchronize do
        while @count < @target
          left = deadline - Bench.now
          raise "timed out after #{timeout} s with #{@count} of #{@target} jobs done" if left <= 0
          @done.wait(@lock, left)
        end
      end
    end
  end
end

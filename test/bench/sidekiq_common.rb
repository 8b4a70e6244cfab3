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

  # The highest RSS this process reached, in MB.
  def peak_rss_mb
    kb = File.read("/proc/self/status")[/VmHWM:\s+(\d+)/, 1].to_i
    (kb / 1024.0).round(1)
  end

  # This process's CPU time (user + system), in µs.
  def cpu_us
    Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID, :microsecond)
  end

  def now
    Process.clock_gettime(Process::CLOCK_MONOTONIC)
  end

  # Epoch milliseconds, comparable with the Node side's performance.timeOrigin + now().
  def epoch_ms
    Process.clock_gettime(Process::CLOCK_REALTIME, :float_millisecond)
  end

  # The same text as the edgekiq side's filler().
  def filler(bytes)
    unit = "edgekiq-scaling-payload-0123456789abcdefghijklmnopqrstuvwxyz-"
    (unit * (bytes / unit.size + 1))[0, bytes]
  end

  # The scaling scenarios' queue list, as edgekiq's benchQueues(): n - 1
  # empty queues before "default", which holds the load; weighted gives queue
  # i weight 1 + i % 3 (as the CLI's "name,weight": the name that many times).
  def queue_list(n, mode)
    names = (1...n).map { |i| "empty-#{i}" } + ["default"]
    return [names, true] if mode == "strict"
    [names.each_with_index.flat_map { |name, i| [name] * (1 + i % 3) }, false]
  end

  # Starts an embedded launcher (the same objects `sidekiq` CLI builds).
  def launcher(concurrency, queues = ["default"], strict: true)
    Sidekiq.options[:concurrency] = concurrency
    Sidekiq.options[:queues] = queues
    Sidekiq.options[:strict] = strict
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

  # Redis's main-thread CPU (µs) and commands processed so far, from one
  # `INFO cpu stats` (the same command the Node side reads).
  def redis_counters
    text = Sidekiq.redis { |c| c.call(:info, "cpu", "stats") }
    field = ->(name) { Float(text[/^#{name}:([\d.]+)/, 1]) }
    [((field.call("used_cpu_sys_main_thread") + field.call("used_cpu_user_main_thread")) * 1e6).round,
      field.call("total_commands_processed").to_i]
  end

  def redis_cpu_us
    redis_counters[0]
  end

  # Redis's CPU (µs) and commands while the block runs, less the INFO that opened the window.
  def redis_cost
    cpu0, cmds0 = redis_counters
    yield
    cpu1, cmds1 = redis_counters
    [cpu1 - cpu0, cmds1 - cmds0 - 1]
  end

  # CPU per job over the second half of a drain, and over all of it (the edgekiq side's cpuPerJob()).
  class CpuPerJob
    def initialize(jobs)
      @jobs = jobs
      @half = jobs / 2
      @start = Bench.cpu_us
      @mid = @start
    end

    def tick(done)
      @mid = Bench.cpu_us if done == @half
    end

    def result
      stop = Bench.cpu_us
      {cpuUsPerJob: ((stop - @mid).to_f / (@jobs - @half)).round(2),
       cpuUsPerJobWholeDrain: ((stop - @start).to_f / @jobs).round(2)}
    end
  end

  # Drain windows (the edgekiq side's --windows): jobs/s and Redis µs/job per K-th of the drain.
  class Windows
    def initialize(jobs, windows)
      @jobs = jobs
      @every = windows > 0 ? (jobs.to_f / windows).ceil : 0
      @marks = []
      @lock = Mutex.new
    end

    def mark
      return if @every == 0
      at = Bench.now
      us = Bench.redis_cpu_us
      @lock.synchronize { @marks << [at, us] }
    end

    def tick(done)
      mark if @every > 0 && (done % @every == 0 || done == @jobs)
    end

    def report
      return nil if @every == 0
      marks = @marks.sort_by(&:first)
      (1...marks.size).map do |i|
        n = [@every, @jobs - (i - 1) * @every].min
        {jobsPerSec: (n / (marks[i][0] - marks[i - 1][0])).round,
         redisUsPerJob: ((marks[i][1] - marks[i - 1][1]).to_f / n).round(2)}
      end
    end
  end

  # Counts performed jobs; the main thread waits for the N-th.
  class Counter
    def initialize(target)
      @target = target
      @count = 0
      @lock = Mutex.new
      @done = ConditionVariable.new
    end

    # Returns the count after this one.
    def increment
      @lock.synchronize do
        @count += 1
        @done.broadcast if @count == @target
        @count
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

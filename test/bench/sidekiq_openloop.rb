# frozen_string_literal: true

# Ruby Sidekiq push-to-start latency under an open-loop load: the roles,
# arguments and figures of edgekiq-openloop.ts and open-loop.mjs (job i due
# at start + i / rate whatever the worker does; each tick push_bulk's the
# jobs that came due, stamped with the time they were pushed).
#
#   ruby sidekiq_openloop.rb --role worker   --url redis://... --jobs N [--concurrency 10]
#   ruby sidekiq_openloop.rb --role producer --url redis://... --rate R --seconds T [--warmup-seconds W]
#                            [--prelude-jobs N --prelude-rate R2]

require_relative "sidekiq_common"

class PingJob
  include Sidekiq::Worker

  class << self
    attr_accessor :recorder
  end

  def perform(at, counted)
    PingJob.recorder.record(at, counted)
  end
end

# Push-to-start samples, until N jobs have started.
class Recorder
  attr_reader :samples, :first, :last

  def initialize(jobs)
    @counter = Bench::Counter.new(jobs)
    @samples = []
    @first = Float::INFINITY
    @last = 0
    @lock = Mutex.new
  end

  def record(at, counted)
    now = Bench.epoch_ms
    if counted == 1
      @lock.synchronize do
        @samples << now - at
        @first = now if now < @first
        @last = now if now > @last
      end
    end
    @counter.increment
  end

  def wait(timeout)
    @counter.wait(timeout)
  end
end

def pct(sorted, p)
  sorted[[[((p / 100.0) * sorted.size).ceil - 1, 0].max, sorted.size - 1].min]
end

def produce(a)
  rate = Float(a.fetch("rate"))
  # The prelude: uncounted jobs first at their own rate (open-loop.mjs says why).
  prelude = Integer(a.fetch("prelude-jobs", "0"))
  fast = Float(a.fetch("prelude-rate", a.fetch("rate")))
  total = prelude + [(rate * Float(a.fetch("seconds"))).round, 1].max
  warm = prelude + (rate * Float(a.fetch("warmup-seconds", "1"))).round
  start = Bench.epoch_ms + 50
  due_at = lambda do |i|
    i < prelude ? start + i * 1000.0 / fast : start + prelude * 1000.0 / fast + (i - prelude) * 1000.0 / rate
  end
  due_by = lambda do |now|
    in_prelude = ((now - start) * fast / 1000).floor + 1
    next [in_prelude, 0].max if in_prelude <= prelude
    prelude + ((now - due_at.call(prelude)) * rate / 1000).floor + 1
  end
  sent = 0
  lags = []
  while sent < total
    now = Bench.epoch_ms
    due = [total, due_by.call(now)].min
    if due > sent
      lags << now - due_at.call(sent)
      args = (sent...due).map { |i| [now, i >= warm ? 1 : 0] }
      Sidekiq::Client.push_bulk("class" => PingJob, "args" => args)
      sent = due
    end
    wait = (due_at.call(sent) - Bench.epoch_ms) / 1000.0
    sleep([wait, 0.001].max)
  end
  lags.sort!
  {jobs: total, counted: total - warm, batches: lags.size, lagP50Ms: pct(lags, 50).round(3),
   lagP99Ms: pct(lags, 99).round(3), lagMaxMs: lags.last.round(3)}
end

Bench.main do |a|
  concurrency = Integer(a.fetch("concurrency", "10"))
  Bench.configure(a.fetch("url"), concurrency + 5)
  next produce(a) if a["role"] == "producer"

  jobs = Integer(a.fetch("jobs"))
  PingJob.recorder = Recorder.new(jobs)
  launcher = Bench.launcher(concurrency)
  launcher.run
  sleep 0.3
  cpu0 = Bench.cpu_us
  $stdout.puts("ready")
  $stdout.flush
  PingJob.recorder.wait(Float(a.fetch("deadline", "600")))
  cpu_us = Bench.cpu_us - cpu0
  rss = Bench.rss_mb
  launcher.stop
  r = PingJob.recorder
  s = r.samples.sort
  {
    samples: s.size,
    p50: pct(s, 50).round(3),
    p99: pct(s, 99).round(3),
    p999: pct(s, 99.9).round(3),
    max: s.last.round(3),
    mean: (s.sum / s.size).round(3),
    achievedPerSec: r.last > r.first ? ((s.size - 1) / ((r.last - r.first) / 1000.0)).round : nil,
    cpuUsPerJob: (cpu_us.to_f / jobs).round(2),
    rssMB: rss,
    peakRssMB: Bench.peak_rss_mb
  }
end

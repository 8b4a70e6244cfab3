# frozen_string_literal: true

# Ruby Sidekiq enqueue-to-perform latency on an idle embedded launcher:
# Sidekiq::Client.push one job, wait for it to run, repeat. Measured from
# just before push to the start of perform, in one process.
#
#   ruby sidekiq_latency.rb --url redis://... --jobs N [--warmup N]

require_relative "sidekiq_common"

class PingJob
  include Sidekiq::Worker

  class << self
    attr_accessor :sent_at, :lock, :ran, :sample
  end

  def perform(_i)
    ms = (Bench.now - PingJob.sent_at) * 1000.0
    PingJob.lock.synchronize do
      PingJob.sample = ms
      PingJob.ran.signal
    end
  end
end

Bench.main do |a|
  jobs = Integer(a.fetch("jobs", "1000"))
  warmup = Integer(a.fetch("warmup", "2000"))
  Bench.configure(a.fetch("url"), 15)
  PingJob.lock = Mutex.new
  PingJob.ran = ConditionVariable.new
  launcher = Bench.launcher(10)
  launcher.run
  sleep 0.3

  one = lambda do |i|
    PingJob.lock.synchronize do
      PingJob.sample = nil
      PingJob.sent_at = Bench.now
      Sidekiq::Client.push("class" => PingJob, "args" => [i])
      deadline = Bench.now + 5
      while PingJob.sample.nil?
        left = deadline - Bench.now
        raise "job #{i} did not run within 5 s" if left <= 0
        PingJob.ran.wait(PingJob.lock, left)
      end
      PingJob.sample
    end
  end
  warmup.times { |i| one.call(-1 - i) }
  samples = Array.new(jobs) { |i| one.call(i) }.sort
  launcher.stop
  pct = ->(p) { samples[[[((p / 100.0) * samples.size).ceil - 1, 0].max, samples.size - 1].min] }
  {
    jobs: jobs,
    warmup: warmup,
    p50: pct.call(50).round(3),
    p99: pct.call(99).round(3),
    max: samples.last.round(3),
    mean: (samples.sum / samples.size).round(3),
    rssMB: Bench.rss_mb
  }
end

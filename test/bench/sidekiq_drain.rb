# frozen_string_literal: true

# Ruby Sidekiq drain: pre-enqueue N jobs with Sidekiq::Client.push_bulk
# (1,000 per call, untimed), then time an embedded Sidekiq::Launcher
# (basic fetch, BRPOP) until N jobs have run. With --sleep-ms each job
# sleeps (the I/O-bound scenario).
#
#   ruby sidekiq_drain.rb --url redis://... --jobs N --concurrency C [--sleep-ms 5] [--phase seed|drain|both]
#     [--payload BYTES] [--queues N --queue-mode strict|weighted] [--windows K]

require_relative "sidekiq_common"

class NoopJob
  include Sidekiq::Worker

  class << self
    attr_accessor :counter, :sleep_s, :windows, :cpu
  end

  def perform(_i, _pad = nil)
    sleep(NoopJob.sleep_s) if NoopJob.sleep_s > 0
    done = NoopJob.counter.increment
    NoopJob.cpu.tick(done)
    NoopJob.windows.tick(done)
  end
end

Bench.main do |a|
  jobs = Integer(a.fetch("jobs", "100000"))
  concurrency = Integer(a.fetch("concurrency", "10"))
  sleep_ms = Float(a.fetch("sleep-ms", "0"))
  Bench.configure(a.fetch("url"), concurrency + 5)
  NoopJob.counter = Bench::Counter.new(jobs)
  NoopJob.sleep_s = sleep_ms / 1000.0
  NoopJob.windows = Bench::Windows.new(jobs, Integer(a.fetch("windows", "0")))

  # The harness seeds in a process of its own (--phase seed), so the drain's
  # RSS is the worker's.
  phase = a.fetch("phase", "both")
  payload = Integer(a.fetch("payload", "0"))
  if phase != "drain"
    pad = payload > 0 ? Bench.filler(payload) : nil
    chunk = [[8_000_000 / [payload, 1].max, 1000].min, 1].max
    (0...jobs).each_slice(chunk) do |slice|
      Sidekiq::Client.push_bulk("class" => NoopJob, "args" => slice.map { |i| pad ? [i, pad] : [i] })
    end
  end
  queued = Sidekiq::Queue.new("default").size
  raise "found #{queued} jobs queued, expected #{jobs}" unless queued == jobs
  next {seeded: jobs} if phase == "seed"

  queues, strict = Bench.queue_list(Integer(a.fetch("queues", "1")), a.fetch("queue-mode", "strict"))
  before = Bench.server_commands
  NoopJob.cpu = Bench::CpuPerJob.new(jobs)
  t0 = Bench.now
  NoopJob.windows.mark
  launcher = Bench.launcher(concurrency, queues, strict: strict)
  launcher.run
  NoopJob.counter.wait(Float(a.fetch("deadline", "600")))
  seconds = Bench.now - t0
  cpu = NoopJob.cpu.result
  rss = Bench.rss_mb
  launcher.stop
  server_cmds = Bench.server_commands - before - 1
  left = Sidekiq::Queue.new("default").size
  raise "drain left #{left} jobs" unless left == 0

  {
    jobs: jobs,
    jobsPerSec: (jobs / seconds).round,
    seconds: seconds.round(3),
    **cpu,
    rssMB: rss,
    peakRssMB: Bench.peak_rss_mb,
    windows: NoopJob.windows.report,
    roundTripsPerJob: nil,
    serverCommandsPerJob: (server_cmds.to_f / jobs).round(3),
    pctIdeal: sleep_ms > 0 ? (100.0 * jobs / seconds / (concurrency * 1000.0 / sleep_ms)).round(1) : nil
  }
end

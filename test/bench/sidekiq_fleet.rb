# frozen_string_literal: true

# One process of the fleet benchmark, Sidekiq's side (see fleet.ts): an
# embedded launcher that starts on "go" (stdin) and stops on "stop",
# printing `progress <performed> <epoch ms of its last job>` every 50 ms.
#
#   ruby sidekiq_fleet.rb --url redis://... --concurrency C

require_relative "sidekiq_common"

class NoopJob
  include Sidekiq::Worker

  class << self
    attr_accessor :performed, :last_at, :lock
  end

  def perform(_i, _pad = nil)
    NoopJob.lock.synchronize do
      NoopJob.performed += 1
      NoopJob.last_at = (Bench.epoch_ms).floor
    end
  end
end

Bench.main do |a|
  concurrency = Integer(a.fetch("concurrency", "50"))
  Bench.configure(a.fetch("url"), concurrency + 5)
  NoopJob.performed = 0
  NoopJob.last_at = 0
  NoopJob.lock = Mutex.new
  $stdout.puts("ready")
  $stdout.flush
  $stdin.gets # go
  cpu0 = Bench.cpu_us
  launcher = Bench.launcher(concurrency)
  launcher.run
  reporter = Thread.new do
    loop do
      $stdout.puts("progress #{NoopJob.performed} #{NoopJob.last_at}")
      $stdout.flush
      sleep 0.05
    end
  end
  $stdin.gets # stop
  reporter.kill
  cpu_s = (Bench.cpu_us - cpu0) / 1e6
  rss = Bench.rss_mb
  launcher.stop
  {performed: NoopJob.performed, lastAt: NoopJob.last_at, rssMB: rss, cpuSeconds: cpu_s.round(3)}
end

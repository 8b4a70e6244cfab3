# frozen_string_literal: true

# Ruby Sidekiq bulk push: time Sidekiq::Client.push_bulk of N no-op jobs,
# 1,000 per call (Sidekiq's own recommendation; 6.4 does not split batches).
#
#   ruby sidekiq_push.rb --url redis://... --jobs N

require_relative "sidekiq_common"

class NoopJob
  include Sidekiq::Worker

  def perform(_i)
  end
end

Bench.main do |a|
  jobs = Integer(a.fetch("jobs", "100000"))
  Bench.configure(a.fetch("url"), 5)
  slices = (0...jobs).each_slice(1000).map { |slice| slice.map { |i| [i] } }
  Sidekiq::Client.push_bulk("class" => NoopJob, "args" => slices.first.first(100), "queue" => "warmup")
  Sidekiq.redis { |c| c.del("queue:warmup") }

  before = Bench.server_commands
  t0 = Bench.now
  slices.each { |args| Sidekiq::Client.push_bulk("class" => NoopJob, "args" => args) }
  seconds = Bench.now - t0
  server_cmds = Bench.server_commands - before - 1
  queued = Sidekiq::Queue.new("default").size
  raise "pushed #{queued} jobs, expected #{jobs}" unless queued == jobs

  {
    jobs: jobs,
    jobsPerSec: (jobs / seconds).round,
    seconds: seconds.round(3),
    rssMB: Bench.rss_mb,
    roundTripsPerJob: (slices.size.to_f / jobs).round(4),
    serverCommandsPerJob: (server_cmds.to_f / jobs).round(4)
  }
end

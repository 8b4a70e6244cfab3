# frozen_string_literal: true

# Ruby Sidekiq's own scheduled-set promotion: N due jobs in `schedule`
# (seeded with push_bulk and a past "at"), moved by
# Sidekiq::Scheduled::Enq#enqueue_jobs: one EVALSHA per job, then a client
# push (MULTI SADD + LPUSH) per job.
#
#   ruby sidekiq_enq.rb --url redis://... --jobs N

require_relative "sidekiq_common"

class NoopJob
  include Sidekiq::Worker

  def perform(_i)
  end
end

Bench.main do |a|
  jobs = Integer(a.fetch("jobs", "100000"))
  Bench.configure(a.fetch("url"), 5)
  past = Time.now.to_f - 60
  (0...jobs).each_slice(1000) do |slice|
    Sidekiq::Client.push_bulk("class" => NoopJob, "args" => slice.map { |i| [i] }, "at" => past)
  end
  seeded = Sidekiq.redis { |c| c.zcard("schedule") }
  raise "seeded #{seeded} scheduled jobs, expected #{jobs}" unless seeded == jobs

  before = Bench.server_commands
  t0 = Bench.now
  Sidekiq::Scheduled::Enq.new.enqueue_jobs(["schedule"])
  seconds = Bench.now - t0
  server_cmds = Bench.server_commands - before - 1
  queued = Sidekiq::Queue.new("default").size
  raise "promoted #{queued} jobs, expected #{jobs}" unless queued == jobs

  {
    jobs: jobs,
    jobsPerSec: (jobs / seconds).round,
    seconds: seconds.round(3),
    roundTripsPerJob: 2.0,
    serverCommandsPerJob: (server_cmds.to_f / jobs).round(3)
  }
end

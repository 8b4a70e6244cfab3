# frozen_string_literal: true

# Ruby Sidekiq's own scheduled-set promotion: N due jobs in `schedule`
# (seeded with push_bulk and a past "at"), moved by
# Sidekiq::Scheduled::Enq#enqueue_jobs: one EVALSHA per job, then a client
# push (MULTI SADD + LPUSH) per job.
#
#   ruby sidekiq_enq.rb --url redis://... --jobs N [--waiting W --idle-polls R]
#
# With --waiting, W more jobs are scheduled a day ahead, and R idle polls
# (enqueue_jobs over retry and schedule while nothing is due, what Sidekiq's
# poller runs every few seconds) are measured first: edgekiq-promote.ts's
# scaling figures.

require_relative "sidekiq_common"

class NoopJob
  include Sidekiq::Worker

  def perform(_i)
  end
end

Bench.main do |a|
  jobs = Integer(a.fetch("jobs", "100000"))
  waiting = Integer(a.fetch("waiting", "0"))
  polls = Integer(a.fetch("idle-polls", "0"))
  Bench.configure(a.fetch("url"), 5)
  later = Time.now.to_f + 86_400
  (0...waiting).each_slice(1000) do |slice|
    Sidekiq::Client.push_bulk("class" => NoopJob, "args" => slice.map { |i| [i] }, "at" => later)
  end
  enq = Sidekiq::Scheduled::Enq.new
  enq.enqueue_jobs # loads the script
  idle_us, idle_cmds = Bench.redis_cost { polls.times { enq.enqueue_jobs } }

  past = Time.now.to_f - 60
  (0...jobs).each_slice(1000) do |slice|
    Sidekiq::Client.push_bulk("class" => NoopJob, "args" => slice.map { |i| [i] }, "at" => past)
  end
  seeded = Sidekiq.redis { |c| c.zcard("schedule") }
  raise "seeded #{seeded} scheduled jobs, expected #{jobs + waiting}" unless seeded == jobs + waiting

  before = Bench.server_commands
  t0 = Bench.now
  redis_us, = Bench.redis_cost { enq.enqueue_jobs(["schedule"]) }
  seconds = Bench.now - t0
  server_cmds = Bench.server_commands - before - 1
  queued = Sidekiq::Queue.new("default").size
  raise "promoted #{queued} jobs, expected #{jobs}" unless queued == jobs

  {
    jobs: jobs,
    jobsPerSec: (jobs / seconds).round,
    seconds: seconds.round(3),
    roundTripsPerJob: 2.0,
    serverCommandsPerJob: (server_cmds.to_f / jobs).round(3),
    waiting: waiting,
    redisUsPerJob: (redis_us / jobs).round(2),
    idlePolls: polls,
    idlePollUs: polls > 0 ? (idle_us / polls).round(1) : nil,
    idlePollCommands: polls > 0 ? (idle_cmds.to_f / polls).round(2) : nil
  }
end

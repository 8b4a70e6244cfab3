# Pushes an ActiveJob job exactly as Rails' Sidekiq adapter does (Rails 7.1,
# activejob/lib/active_job/queue_adapters/sidekiq_adapter.rb; ActiveJob is not
# installed here, so its two calls are transcribed):
#   enqueue:    Sidekiq::Client.push("class" => JobWrapper, "wrapped" => job.class,
#                                    "queue" => job.queue_name, "args" => [job.serialize])
#   enqueue_at: the same plus "at" => timestamp
# Usage: activejob_push.rb JOB_CLASS '<job.serialize hash>' [RUN_AT_EPOCH_SECONDS]
require_relative "common"
module ActiveJob
  module QueueAdapters
    class SidekiqAdapter
      class JobWrapper
        include Sidekiq::Worker
      end
    end
  end
end
job_class = Object.const_set(ARGV.fetch(0), Class.new)
item = {
  "class" => ActiveJob::QueueAdapters::SidekiqAdapter::JobWrapper,
  "wrapped" => job_class,
  "queue" => arg_json(1).fetch("queue_name"),
  "args" => [arg_json(1)]
}
item["at"] = Float(ARGV[2]) if ARGV[2]
emit(Sidekiq::Client.push(item))

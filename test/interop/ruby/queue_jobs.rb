# Lists a queue through Sidekiq::Queue.  Usage: queue_jobs.rb QUEUE
require_relative "common"
emit(Sidekiq::Queue.new(ARGV.fetch(0, "default")).map { |job| record(job) })

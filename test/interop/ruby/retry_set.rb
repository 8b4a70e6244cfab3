# Lists the retry set through Sidekiq::RetrySet.
require_relative "common"
emit(Sidekiq::RetrySet.new.map { |job| record(job) })

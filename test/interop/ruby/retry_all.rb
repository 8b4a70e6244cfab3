# Sidekiq::RetrySet#retry_all: every retry back to its queue now. Prints how many.
require_relative "common"
set = Sidekiq::RetrySet.new
size = set.size
set.retry_all
emit(size)

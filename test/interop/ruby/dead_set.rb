# Lists the dead set through Sidekiq::DeadSet.
require_relative "common"
emit(Sidekiq::DeadSet.new.map { |job| record(job) })

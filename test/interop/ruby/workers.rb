# Lists Sidekiq::Workers (6.4's WorkSet): [process identity, thread id, work].
require_relative "common"
emit(Sidekiq::Workers.new.map { |process, tid, work| { "process" => process, "tid" => tid, "work" => work } })

# Sidekiq::DeadSet#kill of one payload (what the Web UI's "Kill" does).
# Usage: dead_kill.rb '<payload json>'
require_relative "common"
emit(Sidekiq::DeadSet.new.kill(Sidekiq.dump_json(arg_json(0)), notify_failure: false))

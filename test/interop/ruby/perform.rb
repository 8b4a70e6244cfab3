# Pushes through a Sidekiq::Worker class's own API: perform_async, or
# perform_in when SECONDS is given. The class is defined here by name, as an
# app defines it.  Usage: perform.rb CLASS '[args]' [SECONDS]   Prints the jid.
require_relative "common"
klass = Object.const_set(ARGV.fetch(0), Class.new { include Sidekiq::Worker })
args = arg_json(1)
emit(ARGV[2] ? klass.perform_in(Float(ARGV[2]), *args) : klass.perform_async(*args))

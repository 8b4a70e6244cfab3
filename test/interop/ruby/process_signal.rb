# Finds a process in Sidekiq::ProcessSet and calls quiet! or stop! on it.
# Usage: process_signal.rb IDENTITY quiet|stop   Prints whether it was found.
require_relative "common"
process = Sidekiq::ProcessSet.new.find { |p| p.identity == ARGV.fetch(0) }
case ARGV.fetch(1)
when "quiet" then process&.quiet!
when "stop" then process&.stop!
else abort "unknown signal #{ARGV[1]}"
end
emit(!process.nil?)

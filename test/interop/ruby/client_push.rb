# Pushes raw job hashes with Sidekiq::Client.push (an "at" schedules them).
# Usage: client_push.rb '[{"class":"X","args":[1]}, ...]'   Prints the jids.
require_relative "common"
emit(arg_json(0).map { |item| Sidekiq::Client.push(item) })

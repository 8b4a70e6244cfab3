# frozen_string_literal: true

# What Sidekiq 6.4's own Web UI costs Redis as the job sets grow: the pages
# edgekiq-dashboard.ts measures (Sidekiq's dead set is /morgue), served by
# Sidekiq::Web through Rack::MockRequest on the data that script seeded.
#
#   ruby sidekiq_web.rb --url redis://... [--requests K]

require_relative "sidekiq_common"
require "sidekiq/web"
require "rack/mock"

FIRST = "4102444800-0123456789abcdef01234567"

Bench.main do |a|
  requests = Integer(a.fetch("requests", "10"))
  Bench.configure(a.fetch("url"), 5)
  app = Rack::MockRequest.new(Sidekiq::Web.new)
  pages = {"/" => "/", "/stats" => "/stats", "/retries" => "/retries", "/dead" => "/morgue",
           "/retries/#{FIRST}" => "/retries/#{FIRST}"}
  out = {}
  pages.each do |name, path|
    get = lambda do
      response = app.get(path, "rack.session" => {})
      ok = response.status == 200 || (path.start_with?("/retries/") && response.status == 302)
      raise "GET #{path} answered #{response.status}" unless ok
    end
    2.times { get.call }
    walls = []
    us = 0
    cmds = 0
    requests.times do
      t0 = Bench.now
      cpu_us, commands = Bench.redis_cost { get.call }
      walls << (Bench.now - t0) * 1000
      us += cpu_us
      cmds += commands
    end
    walls.sort!
    out[name] = {ms: walls[requests / 2].round(2), redisUs: (us / requests).round(1), commands: (cmds.to_f / requests).round(2)}
  end
  {requests: requests, pages: out}
end

# Reads the process set as Sidekiq 8.1 would. Sidekiq 8 is not installed
# here, so its reader is transcribed from sidekiq/sidekiq v8.1.7
# lib/sidekiq/api.rb: ProcessSet#each (HMGET info, concurrency, busy, beat,
# quiet, rss, rtt_us; merged over the info JSON) and Process#queues,
# #weights, #capsules, #stopping?.
# Prints [{identity, concurrency, busy, beat, queues, weights, capsules, stopping}].
require_relative "common"

class Sidekiq8Process
  def initialize(hash)
    @attribs = hash
  end

  def [](key)
    @attribs[key]
  end

  def queues
    # Backwards compatibility with <8.0.8
    if !self["capsules"]
      self["queues"]
    else
      capsules.values.flat_map { |x| x["weights"].keys }.uniq
    end
  end

  def weights
    # Backwards compatibility with <8.0.8
    if !self["capsules"]
      self["weights"]
    else
      hash = {}
      capsules.values.each do |cap|
        cap["weights"].each_pair do |queue, weight|
          hash[queue] = weight
        end
      end
      hash
    end
  end

  def capsules
    self["capsules"]
  end

  def stopping?
    self["quiet"] == "true"
  end
end

result = Sidekiq.redis { |conn|
  procs = conn.sscan_each("processes").to_a.sort
  conn.pipelined do |pipeline|
    procs.each do |key|
      pipeline.hmget(key, "info", "concurrency", "busy", "beat", "quiet", "rss", "rtt_us")
    end
  end
}
out = result.filter_map do |info, concurrency, busy, beat, quiet, rss, rtt_us|
  next if info.nil?
  hash = Sidekiq.load_json(info)
  p = Sidekiq8Process.new(hash.merge("concurrency" => concurrency.to_i,
    "busy" => busy.to_i,
    "beat" => beat.to_f,
    "quiet" => quiet,
    "rss" => rss.to_i,
    "rtt_us" => rtt_us.to_i))
  {
    "identity" => p["identity"], "concurrency" => p["concurrency"], "busy" => p["busy"], "beat" => p["beat"],
    "queues" => p.queues, "weights" => p.weights, "capsules" => p.capsules, "stopping" => p.stopping?
  }
end
emit(out)

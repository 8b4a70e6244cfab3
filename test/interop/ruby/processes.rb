# Lists Sidekiq::ProcessSet: every attribute, plus the API's own accessors.
require_relative "common"
emit(Sidekiq::ProcessSet.new.map { |process|
  process.instance_variable_get(:@attribs).merge(
    "api_identity" => process.identity, "api_queues" => process.queues, "api_tag" => process.tag,
    "api_labels" => process.labels, "api_stopping" => process.stopping?
  )
})

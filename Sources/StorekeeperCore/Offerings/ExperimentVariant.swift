/// One arm of an experiment: the offering it serves and its share of the audience.
package struct ExperimentVariant: Codable, Sendable, Equatable {
  /// 1-64 of `[a-z0-9_-]`, unique within the experiment.
  package var variant: String
  package var offeringId: String
  /// 1-1000; a variant's share is its weight over the sum of the weights.
  package var weight: Int

  package init(variant: String, offeringId: String, weight: Int) {
    self.variant = variant
    self.offeringId = offeringId
    self.weight = weight
  }

  enum CodingKeys: String, CodingKey {
    case variant
    case offeringId = "offering_id"
    case weight
  }

  package static let maxWeight = 1000
  package static let variantCounts = 2...4
}

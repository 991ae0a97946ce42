import StorekeeperCore

/// A placement as served, resolved once per catalog change: its fallback offering, its rules,
/// the experiment that decides it when no rule matches, and the encoded offering each of them
/// names (a variant's with its `Storekeeper-Experiment` header already in). Immutable and
/// shared: a request takes it from the snapshot with one retain and reads the rest without the
/// catalog's lock.
final class ServedPlacement: Sendable {
  let placementId: String
  let offeringId: String
  let rules: [TargetingRule]
  /// Running or paused; nil when none.
  let experiment: Experiment?
  /// Whether answering may need to know who the caller is: a rule on the user, or a running
  /// experiment (assignment is by user id).
  let needsUser: Bool
  /// The encodings of `offeringId` and of each rule's offering, by rule index; nil where the
  /// snapshot holds no such offering (a placement names only offerings that exist, so this is
  /// a snapshot read mid-change).
  let own: ServedOfferings.Encoded?
  let ruleOfferings: [ServedOfferings.Encoded?]
  /// Each variant's encoding, with the header naming the experiment and variant, in variant
  /// order.
  let variantOfferings: [ServedOfferings.Encoded?]

  init(
    placementId: String, offeringId: String, rules: [TargetingRule], experiment: Experiment?,
    offerings: [String: ServedOfferings.Encoded]
  ) {
    self.placementId = placementId
    self.offeringId = offeringId
    self.rules = rules
    self.experiment = experiment
    needsUser = rules.contains { $0.when.needsUser } || experiment?.status == .running
    own = offerings[offeringId]
    ruleOfferings = rules.map { offerings[$0.offeringId] }
    variantOfferings =
      experiment.map { experiment in
        experiment.variants.map { variant in
          offerings[variant.offeringId]?.adding(
            OfferingRoutes.experimentHeader,
            "\(experiment.experimentId); variant=\(variant.variant)")
        }
      } ?? []
  }

  /// The variant a running experiment gives `user`, by index, and the key its exposure is
  /// recorded under; nil when no experiment runs.
  func assign(_ user: String) -> (index: Int, key: ExposureKey)? {
    guard let experiment, experiment.status == .running else { return nil }
    let key = ExperimentAssignment.key(experimentId: experiment.experimentId, userId: user)
    guard let index = ExperimentAssignment.index(bucket: key.bucket, variants: experiment.variants)
    else { return nil }
    return (index, key)
  }
}

import StorekeeperCore

/// A placement as served: its fallback offering, its rules, and the experiment that decides it
/// when no rule matches.
struct ServedPlacement: Sendable {
  var placementId: String
  var offeringId: String
  var rules: [TargetingRule]
  /// Running or paused; nil when none.
  var experiment: Experiment?

  /// Whether answering may need to know who the caller is: a rule on the user, or a running
  /// experiment (assignment is by user id).
  var needsUser: Bool {
    rules.contains { $0.when.needsUser } || experiment?.status == .running
  }
}

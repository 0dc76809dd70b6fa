"""Client quotas (KIP-599) and entity configs on the active controller: loading, config change
notifications, AlterClientQuotas, DescribeConfigs and IncrementalAlterConfigs."""

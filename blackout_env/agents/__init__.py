"""The agents' interface: the policy protocol and registry (policy specs by name), and seating a policy at a table."""

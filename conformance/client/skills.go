package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/ferrymcp/ferry/skills"
)

// skillsScenario is the host of the sep-2640-client-* scenarios: it
// builds its registry from skills/list and fetches nothing further
// (no-prefetch), or then loads the first skill, as a user approving it
// would, and reads each of its files (verify-*): a skill that fails
// verification is refused, and nothing more of it is read.
func (r *run) skillsScenario(ctx context.Context, load bool) error {
	c, err := r.connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	sc := skills.NewClient(c)
	entries, err := collectSkills(ctx, sc)
	if err != nil || !load || len(entries) == 0 {
		return err
	}
	entry := entries[0]
	loaded, err := sc.Load(ctx, &entry)
	if errors.Is(err, skills.ErrVerification) {
		return fmt.Errorf("refusing the skill: %w", err)
	}
	if err != nil {
		return err
	}
	for _, res := range entry.Resources {
		if _, err := loaded.ReadFile(ctx, res.URI); err != nil {
			return fmt.Errorf("refusing the skill: %w", err)
		}
	}
	return nil
}

func collectSkills(ctx context.Context, sc *skills.Client) ([]skills.Skill, error) {
	var out []skills.Skill
	for s, err := range sc.Skills(ctx) {
		if err != nil {
			return nil, fmt.Errorf("skills/list: %w", err)
		}
		out = append(out, s)
	}
	return out, nil
}

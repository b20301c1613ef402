package authz_test

import (
	"slices"
	"testing"

	"github.com/contractflow/contractflow/platform/authz"
)

func TestAllowed(t *testing.T) {
	en, err := authz.New()
	if err != nil {
		t.Fatal(err)
	}
	if err := en.Load([]authz.Grant{{Role: "Drafter", MenuKey: "Contracts", Action: authz.Read}}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		roles  []string
		policy string
		want   bool
	}{
		{"granted", []string{"Drafter"}, "Contracts.Read", true},
		{"another action", []string{"Drafter"}, "Contracts.Delete", false},
		{"another key", []string{"Drafter"}, "Users.Read", false},
		{"one of several roles grants it", []string{"Finance", "Drafter"}, "Contracts.Read", true},
		{"no roles", nil, "Contracts.Read", false},
		{"Admin without a single grant", []string{"Admin"}, "Users.Delete", true},
		{"Admin among other roles", []string{"Finance", "Admin"}, "Anything.Update", true},
		{"role names are exact", []string{"admin"}, "Users.Read", false},
		{"a malformed policy is refused, even to Admin", []string{"Admin"}, "Contracts", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := en.Allowed(tc.roles, tc.policy); got != tc.want {
				t.Errorf("Allowed(%v, %q) = %v, want %v", tc.roles, tc.policy, got, tc.want)
			}
		})
	}
}

func TestActionsOf(t *testing.T) {
	cases := []struct {
		letters string
		want    []string
		wantErr bool
	}{
		{letters: "", want: nil},
		{letters: "R", want: []string{authz.Read}},
		{letters: "CRUD", want: authz.Actions},
		{letters: "UCR", want: []string{authz.Read, authz.Create, authz.Update}},
		{letters: "RC", want: []string{authz.Read, authz.Create}},
		{letters: "r", wantErr: true},
		{letters: "RX", wantErr: true},
		{letters: "RR", wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.letters, func(t *testing.T) {
			got, err := authz.ActionsOf(tc.letters)
			if (err != nil) != tc.wantErr {
				t.Fatalf("ActionsOf(%q) error %v, want error %v", tc.letters, err, tc.wantErr)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("ActionsOf(%q) = %v, want %v", tc.letters, got, tc.want)
			}
		})
	}
}

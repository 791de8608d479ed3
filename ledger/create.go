package ledger

import (
	"context"
	"fmt"
	"time"
)

// CreateTx is what a store does inside one creation: SQL only. The rule of
// one business intent, one operation (CreateIn) is shared by every store.
type CreateTx interface {
	// InsertIfNew inserts op, PREPARED, with its creation event, unless
	// its intent (tenant, type, intent reference) exists: inserted is then
	// false and nothing is written.
	InsertIfNew(ctx context.Context, op Operation) (got Operation, inserted bool, err error)
	// ByIntent returns the operation of an existing intent. It must see
	// one committed by a concurrent creator after the insert's snapshot.
	ByIntent(ctx context.Context, tenant, opType, intentRef string) (Operation, error)
	// RecordConflict records that a creation of existing's intent carried
	// another payload (its hash: rejected) or target, at at.
	RecordConflict(ctx context.Context, existing Operation, rejected []byte, at time.Time) error
}

// Creation is what CreateIn decided. A refused creation is still committed:
// the payload conflict it records is the evidence managers count.
type Creation struct {
	Operation Operation
	Created   bool  // false: the intent existed
	Refused   error // EPayloadConflict, recorded (or EInvalid: the payload cannot be bound)
}

// Result is the store's answer for a committed creation.
func (c Creation) Result() (Operation, bool, error) {
	if c.Refused != nil {
		return Operation{}, false, c.Refused
	}
	return c.Operation, c.Created, nil
}

// CreateIn creates op, which is Prepare(n, …) (a store prepares before it
// opens a transaction, so that an invalid request costs none), or decides
// what a repeated creation of an existing intent means (CheckSameIntent):
// the same target and payload return the existing operation, created=false;
// anything else is refused with EPayloadConflict and recorded, never sent.
// An error means: roll back; a refused Creation means: commit, then answer
// Creation.Result.
func CreateIn(ctx context.Context, tx CreateTx, n NewOperation, op Operation) (Creation, error) {
	got, inserted, err := tx.InsertIfNew(ctx, op)
	if err != nil {
		return Creation{}, err
	}
	if inserted {
		return Creation{Operation: got, Created: true}, nil
	}
	existing, err := tx.ByIntent(ctx, op.Tenant, op.Type, op.IntentRef)
	if err != nil {
		return Creation{}, err
	}
	rejected, conflict := CheckSameIntent(existing, n)
	if ErrorCode(conflict) == EPayloadConflict {
		if err := tx.RecordConflict(ctx, existing, rejected, op.CreatedAt); err != nil {
			return Creation{}, err
		}
	}
	if conflict != nil {
		return Creation{Refused: conflict}, nil
	}
	return Creation{Operation: existing}, nil
}

// CreateDriver is the SQL of creation.
type CreateDriver interface {
	// OperationInsertIfNew inserts op, PREPARED, with its creation event
	// (evidence: a JSON object), all or none, unless its intent exists:
	// inserted is then false and nothing is written.
	OperationInsertIfNew(ctx context.Context, op Operation, evidence []byte) (got Operation, inserted bool, err error)
	// OperationInsertBatch inserts the rows' operations, PREPARED, each
	// with its creation event, in one transaction: all or none. A row
	// whose intent exists is skipped, and not returned; inserted are the
	// others, in any order.
	OperationInsertBatch(ctx context.Context, rows []CreationRow) (inserted []Operation, err error)
	// PayloadConflictInsert records a refused creation of existing's intent
	// that carried the payload hash rejected, at at.
	PayloadConflictInsert(ctx context.Context, existing Operation, rejected []byte, at time.Time) error
}

// CreationRow is one operation of OperationInsertBatch with the evidence
// of its creation event (a JSON object).
type CreationRow struct {
	Operation
	Evidence []byte
}

// createOver is CreateTx over a Driver; what it writes is added to c
// (nil: not observed). Outside WithTx each primitive commits on its own:
// the insert with its event, and a refusal's record alone.
type createOver struct {
	d Driver
	c *Commit
}

func (t createOver) InsertIfNew(ctx context.Context, op Operation) (Operation, bool, error) {
	got, inserted, err := t.d.OperationInsertIfNew(ctx, op, CreationEvidence(ctx))
	if err == nil && inserted {
		t.c.Add(got, "")
	}
	return got, inserted, err
}

// ByIntent runs a new statement, which sees an intent committed by a
// concurrent creator after the insert's snapshot.
func (t createOver) ByIntent(ctx context.Context, tenant, opType, intentRef string) (Operation, error) {
	op, found, err := t.d.OperationByIntent(ctx, tenant, opType, intentRef)
	if err == nil && !found {
		err = operationNotFound()
	}
	return op, err
}

func (t createOver) RecordConflict(ctx context.Context, existing Operation, rejected []byte, at time.Time) error {
	if err := t.d.PayloadConflictInsert(ctx, existing, rejected, at); err != nil {
		return fmt.Errorf("record conflict: %w", err)
	}
	t.c.Refuse(existing.Tenant)
	return nil
}

// Create implements Store with CreateIn over the driver, and tells the
// observer what was committed. Concurrent creations are group-committed
// (committer): each is answered once its batch has committed. What its
// batch did not create — an existing intent, a second request of one
// intent, a batch that failed as a whole — is created here on its own, so
// that the rule of one intent, one operation is CreateIn's alone and one
// bad request costs only its own answer.
func (l *Ledger) Create(ctx context.Context, n NewOperation) (Operation, bool, error) {
	op, err := Prepare(n, l.clock())
	if err != nil {
		return Operation{}, false, err
	}
	if l.group != nil {
		got, created, err := l.group.create(ctx, op)
		if err != nil {
			return Operation{}, false, fmt.Errorf("create: %w", err)
		}
		if created {
			return got, true, nil
		}
	}
	var c Commit
	cr, err := CreateIn(ctx, createOver{l.d, &c}, n, op)
	c.Tell(ctx, l.observer)
	if err != nil {
		return Operation{}, false, fmt.Errorf("create: %w", err)
	}
	return cr.Result()
}

// insertBatch is the committer's write: one transaction of rows, its
// creations told to the observer once it has committed.
func (l *Ledger) insertBatch(ctx context.Context, rows []CreationRow) ([]Operation, error) {
	got, err := l.d.OperationInsertBatch(ctx, rows)
	if err != nil {
		return nil, err
	}
	var c Commit
	for _, op := range got {
		c.Add(op, "")
	}
	c.Tell(ctx, l.observer)
	return got, nil
}

"""The Accelerate loop of accelerate_train.py as resumecheck targets.

    resumecheck run examples/frameworks/accelerate_check.py:PLAIN
    resumecheck run examples/frameworks/accelerate_check.py:SEEDABLE
    resumecheck run examples/frameworks/accelerate_check.py:STATEFUL
"""

import resumecheck
from resumecheck.frameworks.accelerate import accelerate_program

import accelerate_train as train  # the user's script, beside this file


def build(settings):
    accelerator, model, optimizer, loader, scheduler = train.setup(**settings)
    def step(batch):
        loss = train.loss_of(model, batch)
        accelerator.backward(loss)
        optimizer.step(); scheduler.step(); optimizer.zero_grad()
        return loss
    return accelerate_program(accelerator, model=model, optimizer=optimizer,
                              scheduler=scheduler, loader=loader, step=step)


def build_without_set_epoch(settings):
    """The same loop, had it never called loader.set_epoch(epoch) (as
    ``accelerate_program(..., set_epoch=False)`` declares)."""
    program = build(settings)
    program.sets_epoch = False
    return program


# 5 batches per epoch: resuming after step 7 lands mid-way through the second epoch.
# The launcher passes the same settings again on a restart (restart_config="run");
# with --isolation process, the warm server imports accelerate once (preload).
def _target(factory=build, **run_config):
    return resumecheck.Target(factory=factory, run_config=run_config, restart_config="run",
                              steps=12, resume_at=(7,), preload=("accelerate",))


PLAIN = _target(loader="plain")
SEEDABLE = _target(loader="seedable")
STATEFUL = _target(loader="stateful")
SEEDABLE_NO_DROPOUT = _target(loader="seedable", dropout=0.0)  # nothing draws after the load
SEEDABLE_OWN_GENERATOR = _target(loader="seedable", own_generator=True)
PLAIN_OWN_GENERATOR = _target(loader="plain", own_generator=True)
# the recommended loader, in a loop that never calls loader.set_epoch(epoch): after a
# resume the prepared loader counts its epochs from 0 again, so the next epoch reads
# another order
SEEDABLE_OWN_GENERATOR_NO_SET_EPOCH = _target(build_without_set_epoch, loader="seedable",
                                              own_generator=True)

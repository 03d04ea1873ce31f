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


# 5 batches per epoch: resuming after step 7 lands mid-way through the second epoch.
# The launcher passes the same settings again on a restart (restart_config="run");
# with --isolation process, the warm server imports accelerate once (preload).
def _target(**run_config):
    return resumecheck.Target(factory=build, run_config=run_config, restart_config="run",
                              steps=12, resume_at=(7,), preload=("accelerate",))


PLAIN = _target(loader="plain")
SEEDABLE = _target(loader="seedable")
STATEFUL = _target(loader="stateful")
SEEDABLE_NO_DROPOUT = _target(loader="seedable", dropout=0.0)  # nothing draws after the load
SEEDABLE_OWN_GENERATOR = _target(loader="seedable", own_generator=True)
PLAIN_OWN_GENERATOR = _target(loader="plain", own_generator=True)

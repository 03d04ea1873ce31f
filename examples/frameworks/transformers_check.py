"""The Trainer script of transformers_train.py as resumecheck targets.

    resumecheck run examples/frameworks/transformers_check.py:DEFAULT
    resumecheck run examples/frameworks/transformers_check.py:IGNORE_DATA_SKIP
"""

from resumecheck.frameworks import trainer_target

import transformers_train as train  # the user's script, beside this file

# 5 batches per epoch: resuming after step 7 lands mid-way through the second epoch.
DEFAULT = trainer_target(train.make_trainer, args=train.ARGS, steps=12, resume_at=(7,))
IGNORE_DATA_SKIP = trainer_target(train.make_trainer, args={**train.ARGS, "ignore_data_skip": True},
                                  steps=12, resume_at=(7,))
